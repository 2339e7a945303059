//! Acting on a judged path, and only on it: opening, reading and replacing the real path
//! that `path.rs` resolved and the approval policy judged, without following any
//! symlink, so a link swapped in after the judgement makes the call fail instead of
//! sending the write (or the read) somewhere else.
//!
//! Every folder on the way is opened with `O_NOFOLLOW` (in one `openat2` with
//! `RESOLVE_NO_SYMLINKS` where the kernel has it, else component by component), and
//! the file is opened, created and renamed relative to that folder's descriptor. Only
//! regular files are opened: a FIFO, a socket or a device is refused from `lstat` before
//! any `open`, then checked again with `fstat` on the descriptor (opened `O_NONBLOCK`, so
//! even a FIFO swapped in between cannot block).
//!
//! `/undo` and rewinding put files back through it too: looking at an entry ([`stat`],
//! [`read_link`]), putting a file back with exact permission bits ([`put_back`]) or a
//! link ([`put_link`]) over whatever entry stands there (replaced itself, never written
//! through), removing a file or link ([`remove`]) or an empty folder
//! ([`remove_empty_dir`]), all in folder handles opened without following links, so a
//! folder swapped for a link on the way fails the call with
//! [`FileError::LinkAppeared`] naming it. It knows files; it must not know tools, rules,
//! approval or undo.

use std::ffi::OsStr;
use std::fs::{File, Permissions};
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, AtFlags, OFlag, openat, readlinkat, renameat};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat, mkdirat};
use nix::unistd::{UnlinkatFlags, symlinkat, unlinkat};

/// What stands at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file: the only kind read or written.
    Regular,
    /// A folder.
    Directory,
    /// A symbolic link.
    Symlink,
    /// A named pipe: opening it for reading waits for a writer, reading it waits forever.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device (`/dev/zero`, `/dev/urandom`, a terminal).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// Anything else.
    Other,
}

impl FileKind {
    fn of(stat: &FileStat) -> FileKind {
        let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
        if kind == SFlag::S_IFREG {
            FileKind::Regular
        } else if kind == SFlag::S_IFDIR {
            FileKind::Directory
        } else if kind == SFlag::S_IFLNK {
            FileKind::Symlink
        } else if kind == SFlag::S_IFIFO {
            FileKind::Fifo
        } else if kind == SFlag::S_IFSOCK {
            FileKind::Socket
        } else if kind == SFlag::S_IFCHR {
            FileKind::CharDevice
        } else if kind == SFlag::S_IFBLK {
            FileKind::BlockDevice
        } else {
            FileKind::Other
        }
    }

    /// The kind with its article, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::Regular => "a regular file",
            FileKind::Directory => "a directory",
            FileKind::Symlink => "a symbolic link",
            FileKind::Fifo => "a named pipe (FIFO)",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Other => "not a regular file",
        }
    }
}

/// Why a judged path could not be opened, read or replaced.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Nothing is there (or a folder on the way is missing).
    #[error("no such file")]
    NotFound,
    /// It is a folder.
    #[error("it is a directory")]
    Directory,
    /// It is a FIFO, a socket, a device…
    #[error("it is {}; only regular files are read or written", .0.describe())]
    NotRegular(FileKind),
    /// A symlink stands where the judged path had none: it appeared after the path was
    /// resolved and judged.
    #[error(
        "{} is a symbolic link now (it changed after the path was checked); nothing was \
         read or written through it",
        .0.display()
    )]
    LinkAppeared(PathBuf),
    /// A folder on the way is not a folder.
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// Anything else the system said.
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl From<Errno> for FileError {
    fn from(errno: Errno) -> Self {
        match errno {
            Errno::ENOENT => FileError::NotFound,
            other => FileError::Io(io::Error::from(other)),
        }
    }
}

/// Whether missing folders on the way are created (a file being written) or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parents {
    /// They must exist.
    Existing,
    /// Missing ones are created.
    Create,
}

/// How every folder on the way is opened: a handle to walk from, never a link followed.
#[cfg(target_os = "linux")]
fn dir_flags() -> OFlag {
    // O_PATH opens without reading (a folder with only search permission works) and,
    // with O_NOFOLLOW, opens a symlink itself, which `fstat` then names.
    OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

#[cfg(not(target_os = "linux"))]
fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// `real` split into its folder and its name; `None` for `/` or a path that is not
/// absolute and plain (resolved paths always are).
fn split(real: &Path) -> Result<(&Path, &OsStr), FileError> {
    let plain = real.is_absolute()
        && real
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    match (plain, real.parent(), real.file_name()) {
        (true, Some(parent), Some(name)) => Ok((parent, name)),
        (true, _, _) => Err(FileError::Directory),
        (false, _, _) => Err(FileError::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a resolved path", real.display()),
        ))),
    }
}

/// Opens the folder `path` (absolute, resolved) without following any symlink on the
/// way; with [`Parents::Create`], missing folders are made.
pub fn open_dir(path: &Path, parents: Parents) -> Result<OwnedFd, FileError> {
    #[cfg(target_os = "linux")]
    if parents == Parents::Existing
        && let Some(fd) = at_once::open_dir(path)
    {
        return Ok(fd);
    }
    walk_to_dir(path, parents)
}

/// [`open_dir`] one component at a time: each opened `O_NOFOLLOW` relative to the last.
fn walk_to_dir(path: &Path, parents: Parents) -> Result<OwnedFd, FileError> {
    let mut dir = openat(AT_FDCWD, "/", dir_flags(), Mode::empty())?;
    let mut here = PathBuf::from("/");
    for component in path.components() {
        let name = match component {
            Component::RootDir => continue,
            Component::Normal(name) => name,
            _ => {
                return Err(FileError::Io(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a resolved path", path.display()),
                )));
            }
        };
        here.push(name);
        let next = match openat(&dir, name, dir_flags(), Mode::empty()) {
            Err(Errno::ENOENT) if parents == Parents::Create => {
                match mkdirat(&dir, name, Mode::from_bits_truncate(0o777)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                openat(&dir, name, dir_flags(), Mode::empty())
            }
            other => other,
        };
        let next = match next {
            Ok(fd) => fd,
            Err(Errno::ELOOP) => return Err(FileError::LinkAppeared(here)),
            Err(Errno::ENOTDIR) => return Err(not_a_dir(&dir, name, here)),
            Err(e) => return Err(e.into()),
        };
        match FileKind::of(&fstat(&next)?) {
            FileKind::Directory => dir = next,
            FileKind::Symlink => return Err(FileError::LinkAppeared(here)),
            _ => return Err(FileError::NotADirectory(here)),
        }
    }
    Ok(dir)
}

/// Why `name` in `dir` could not be opened as a folder.
fn not_a_dir(dir: &OwnedFd, name: &OsStr, here: PathBuf) -> FileError {
    match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).map(|s| FileKind::of(&s)) {
        Ok(FileKind::Symlink) => FileError::LinkAppeared(here),
        _ => FileError::NotADirectory(here),
    }
}

#[cfg(target_os = "linux")]
mod at_once {
    //! `openat2` with `RESOLVE_NO_SYMLINKS`: the whole walk in one call, where the
    //! kernel (5.6+) and any seccomp filter allow it.

    use std::os::fd::OwnedFd;
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};

    use nix::errno::Errno;
    use nix::fcntl::{AT_FDCWD, OFlag, OpenHow, ResolveFlag, openat2};

    /// Set once `openat2` turned out to be missing or filtered.
    static UNAVAILABLE: AtomicBool = AtomicBool::new(false);

    /// The folder, or `None` when the component walk must answer (no `openat2`, or an
    /// error the walk names more precisely).
    pub(super) fn open_dir(path: &Path) -> Option<OwnedFd> {
        if UNAVAILABLE.load(Ordering::Relaxed) {
            return None;
        }
        let how = OpenHow::new()
            .flags(OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS);
        match openat2(AT_FDCWD, path, how) {
            Ok(fd) => Some(fd),
            Err(Errno::ENOSYS | Errno::EPERM | Errno::EINVAL | Errno::E2BIG) => {
                UNAVAILABLE.store(true, Ordering::Relaxed);
                None
            }
            Err(_) => None,
        }
    }

    #[cfg(test)]
    pub(super) fn available() -> bool {
        !UNAVAILABLE.load(Ordering::Relaxed)
    }
}

/// The kind of `name` in `dir`, the link itself when it is one; `None` when absent.
fn kind_in(dir: &OwnedFd, name: &OsStr) -> Result<Option<(FileKind, FileStat)>, FileError> {
    match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some((FileKind::of(&stat), stat))),
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Opens the regular file `real` (absolute, resolved) for reading, following no
/// symlink. A folder, a FIFO, a socket or a device is refused without being opened.
pub fn open_read(real: &Path) -> Result<File, FileError> {
    let (parent, name) = split(real)?;
    let dir = open_dir(parent, Parents::Existing)?;
    open_in(&dir, name, real)
}

/// Opens `name` in `dir` for reading: a regular file, never through a link.
fn open_in(dir: &OwnedFd, name: &OsStr, real: &Path) -> Result<File, FileError> {
    match kind_in(dir, name)? {
        None => return Err(FileError::NotFound),
        Some((FileKind::Regular, _)) => {}
        Some((kind, _)) => return Err(refusal(kind, real)),
    }
    let flags = OFlag::O_RDONLY
        | OFlag::O_NOFOLLOW
        | OFlag::O_NONBLOCK
        | OFlag::O_NOCTTY
        | OFlag::O_CLOEXEC;
    let fd = match openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ELOOP) => return Err(FileError::LinkAppeared(real.to_path_buf())),
        Err(e) => return Err(e.into()),
    };
    // The kind checked above could have changed before the open: this one is the file.
    match FileKind::of(&fstat(fd.as_fd())?) {
        FileKind::Regular => Ok(File::from(fd)),
        kind => Err(refusal(kind, real)),
    }
}

fn refusal(kind: FileKind, real: &Path) -> FileError {
    match kind {
        FileKind::Directory => FileError::Directory,
        FileKind::Symlink => FileError::LinkAppeared(real.to_path_buf()),
        other => FileError::NotRegular(other),
    }
}

/// The kind of what stands at `real` (the link itself when it is one), `None` when
/// nothing does; folders on the way are opened without following links.
pub fn kind_of(real: &Path) -> Result<Option<FileKind>, FileError> {
    let (parent, name) = match split(real) {
        Ok(parts) => parts,
        Err(FileError::Directory) => return Ok(Some(FileKind::Directory)),
        Err(e) => return Err(e),
    };
    let dir = match open_dir(parent, Parents::Existing) {
        Ok(dir) => dir,
        Err(FileError::NotFound) => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(kind_in(&dir, name)?.map(|(kind, _)| kind))
}

/// Replaces (or creates) the regular file `real` with `content`, atomically: a temp
/// file made beside it in the same folder handle, synced, given the old file's
/// permission bits, then renamed over it. No symlink is followed on the way or at the
/// end; a link, folder or special file standing at `real` is refused.
pub fn replace(real: &Path, content: &[u8], parents: Parents) -> Result<(), FileError> {
    let (parent, name) = split(real)?;
    let dir = open_dir(parent, parents)?;
    let mode = match kind_in(&dir, name)? {
        None => None,
        // setuid and setgid bits are not carried over, as a write by anyone but root
        // would clear them.
        Some((FileKind::Regular, stat)) => Some(stat.st_mode & 0o1777),
        Some((kind, _)) => return Err(refusal(kind, real)),
    };
    write_over(&dir, name, content, mode)
}

/// A name for a temporary entry beside `name`, unique in this process.
fn temp_name(name: &OsStr) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let stem: String = name.to_string_lossy().chars().take(100).collect();
    format!(
        ".{stem}.{}-{}.harness9.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Writes `content` to a temp file in `dir`, gives it `mode` (when known), and renames
/// it over `name` in the same folder handle: whatever entry stands at `name` is replaced
/// itself, never written through.
fn write_over(
    dir: &OwnedFd,
    name: &OsStr,
    content: &[u8],
    mode: Option<u32>,
) -> Result<(), FileError> {
    let temp_name = temp_name(name);
    let fd = openat(
        dir,
        temp_name.as_str(),
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o666),
    )?;
    let temp = TempEntry {
        dir,
        name: &temp_name,
    };
    let mut file = File::from(fd);
    file.write_all(content)?;
    file.sync_data()?;
    if let Some(mode) = mode {
        file.set_permissions(Permissions::from_mode(mode))?;
    }
    drop(file);
    renameat(dir, temp_name.as_str(), dir, name)?;
    std::mem::forget(temp);
    Ok(())
}

/// Removes the temp file unless the rename took it.
struct TempEntry<'a> {
    dir: &'a OwnedFd,
    name: &'a str,
}

impl Drop for TempEntry<'_> {
    fn drop(&mut self) {
        let _ = unlinkat(self.dir, self.name, UnlinkatFlags::NoRemoveDir);
    }
}

/// What stands at a path, seen without following any link (the link itself when it is
/// one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// What it is.
    pub kind: FileKind,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Inode number.
    pub ino: u64,
    /// Permission bits, set-ID and sticky bits included.
    pub mode: u32,
}

impl Seen {
    fn of(kind: FileKind, stat: &FileStat) -> Seen {
        Seen {
            kind,
            size: u64::try_from(stat.st_size).unwrap_or(0),
            mtime_ns: i128::from(stat.st_mtime) * 1_000_000_000 + i128::from(stat.st_mtime_nsec),
            ino: stat.st_ino,
            mode: stat.st_mode & 0o7777,
        }
    }
}

/// What stands at `real` (absolute, resolved), seen without following a link on the way
/// or at the end; `None` when nothing does (a folder on the way missing too). A link on
/// the way is [`FileError::LinkAppeared`], naming it.
pub fn stat(real: &Path) -> Result<Option<Seen>, FileError> {
    let (parent, name) = split(real)?;
    let dir = match open_dir(parent, Parents::Existing) {
        Ok(dir) => dir,
        Err(FileError::NotFound) => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(kind_in(&dir, name)?.map(|(kind, stat)| Seen::of(kind, &stat)))
}

/// Where the symbolic link `real` points (read with `readlinkat` in its folder's handle,
/// so no link on the way is followed).
pub fn read_link(real: &Path) -> Result<PathBuf, FileError> {
    let (parent, name) = split(real)?;
    let dir = open_dir(parent, Parents::Existing)?;
    Ok(PathBuf::from(readlinkat(&dir, name)?))
}

/// Puts the regular file `real` back with `content` and exactly the permission bits
/// `mode`, atomically (a temp file in the folder's handle renamed over it). What stands
/// there now, a file, a link or a special file, is replaced itself, never written
/// through; a folder is refused. No link on the way is followed; with
/// [`Parents::Create`] missing folders are made with `mkdirat`.
pub fn put_back(real: &Path, content: &[u8], mode: u32, parents: Parents) -> Result<(), FileError> {
    let (parent, name) = split(real)?;
    let dir = open_dir(parent, parents)?;
    if let Some((FileKind::Directory, _)) = kind_in(&dir, name)? {
        return Err(FileError::Directory);
    }
    write_over(&dir, name, content, Some(mode & 0o7777))
}

/// Puts the symbolic link `real` -> `target` back: made with `symlinkat` under a temp
/// name in the folder's handle, then renamed over what stands there (which is replaced
/// itself; a folder is refused). No link on the way is followed.
pub fn put_link(real: &Path, target: &Path, parents: Parents) -> Result<(), FileError> {
    let (parent, name) = split(real)?;
    let dir = open_dir(parent, parents)?;
    if let Some((FileKind::Directory, _)) = kind_in(&dir, name)? {
        return Err(FileError::Directory);
    }
    let temp_name = temp_name(name);
    symlinkat(target, &dir, temp_name.as_str())?;
    let temp = TempEntry {
        dir: &dir,
        name: &temp_name,
    };
    renameat(&dir, temp_name.as_str(), &dir, name)?;
    std::mem::forget(temp);
    Ok(())
}

/// Removes the file, link or special file `real` with `unlinkat` in its folder's handle
/// (a link is removed itself); a folder is refused; nothing there is no error. No link
/// on the way is followed.
pub fn remove(real: &Path) -> Result<(), FileError> {
    let (parent, name) = split(real)?;
    let dir = match open_dir(parent, Parents::Existing) {
        Ok(dir) => dir,
        Err(FileError::NotFound) => return Ok(()),
        Err(e) => return Err(e),
    };
    match kind_in(&dir, name)? {
        None => return Ok(()),
        Some((FileKind::Directory, _)) => return Err(FileError::Directory),
        Some(_) => {}
    }
    match unlinkat(&dir, name, UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        Err(Errno::EISDIR) => Err(FileError::Directory),
        Err(e) => Err(e.into()),
    }
}

/// Removes the empty folder `real` with `unlinkat(AT_REMOVEDIR)` in its parent's handle
/// (a link standing there is not a folder: `ENOTDIR`). No link on the way is followed.
pub fn remove_empty_dir(real: &Path) -> Result<(), FileError> {
    let (parent, name) = split(real)?;
    let dir = open_dir(parent, Parents::Existing)?;
    match unlinkat(&dir, name, UnlinkatFlags::RemoveDir) {
        Ok(()) => Ok(()),
        Err(Errno::ENOTDIR) => Err(not_a_dir(&dir, name, real.to_path_buf())),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::symlink;

    fn temp() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        (dir, root)
    }

    fn read_all(path: &Path) -> Result<String, FileError> {
        let mut text = String::new();
        open_read(path)?.read_to_string(&mut text)?;
        Ok(text)
    }

    #[test]
    fn regular_files_are_read_and_replaced_keeping_their_permissions() {
        let (_d, root) = temp();
        let file = root.join("run.sh");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, Permissions::from_mode(0o750)).unwrap();
        assert_eq!(read_all(&file).unwrap(), "old");
        replace(&file, b"new", Parents::Existing).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o750);
        // Parents are made only when asked for; no temp file is left either way.
        let deep = root.join("a/b/c.txt");
        assert!(matches!(
            replace(&deep, b"x", Parents::Existing),
            Err(FileError::NotFound)
        ));
        replace(&deep, b"x", Parents::Create).unwrap();
        assert_eq!(std::fs::read_to_string(&deep).unwrap(), "x");
        let names: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    /// The class "a symlink swapped in after the judgement": at the file itself, at its
    /// folder, and at a folder higher up; for reads, replaces and creating parents.
    #[test]
    fn a_link_swapped_in_after_the_judgement_fails_and_nothing_is_written_elsewhere() {
        let (_d, root) = temp();
        let (_o, elsewhere) = temp();
        std::fs::write(elsewhere.join("f.txt"), "victim").unwrap();
        std::fs::create_dir_all(elsewhere.join("sub")).unwrap();
        std::fs::write(elsewhere.join("sub/f.txt"), "victim").unwrap();
        // The judged paths: root/f.txt, root/dir/f.txt, root/up/sub/f.txt.
        std::fs::create_dir_all(root.join("dir")).unwrap();
        std::fs::create_dir_all(root.join("up/sub")).unwrap();
        for judged in ["f.txt", "dir/f.txt", "up/sub/f.txt"] {
            std::fs::write(root.join(judged), "judged").unwrap();
        }
        // Then each is swapped for a link out of the project.
        std::fs::remove_file(root.join("f.txt")).unwrap();
        symlink(elsewhere.join("f.txt"), root.join("f.txt")).unwrap();
        std::fs::remove_dir_all(root.join("dir")).unwrap();
        symlink(&elsewhere, root.join("dir")).unwrap();
        std::fs::remove_dir_all(root.join("up")).unwrap();
        symlink(&elsewhere, root.join("up")).unwrap();
        for judged in ["f.txt", "dir/f.txt", "up/sub/f.txt", "up/sub/new/g.txt"] {
            let path = root.join(judged);
            let read = read_all(&path);
            assert!(
                matches!(read, Err(FileError::LinkAppeared(_))),
                "{judged}: {read:?}"
            );
            for parents in [Parents::Existing, Parents::Create] {
                let written = replace(&path, b"PWNED", parents);
                assert!(
                    matches!(written, Err(FileError::LinkAppeared(_))),
                    "{judged} {parents:?}: {written:?}"
                );
            }
            assert!(
                read.unwrap_err().to_string().contains("symbolic link now"),
                "{judged}"
            );
        }
        // The walk alone (as without openat2) says the same.
        for judged in ["dir", "up/sub"] {
            let walked = walk_to_dir(&root.join(judged), Parents::Existing);
            assert!(
                matches!(walked, Err(FileError::LinkAppeared(_))),
                "{judged}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("f.txt")).unwrap(),
            "victim"
        );
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("sub/f.txt")).unwrap(),
            "victim"
        );
        assert!(!elsewhere.join("sub/new").exists());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 2);
    }

    /// What undo uses, on the class "a folder on the way is a link" (the file's folder, a
    /// folder higher up, a folder to be created below it): every call fails naming the
    /// link and nothing outside changes; at the end of the path a link is replaced or
    /// removed itself, never followed.
    #[test]
    fn putting_back_never_goes_through_a_link_on_the_way() {
        let (_d, root) = temp();
        let (_o, elsewhere) = temp();
        std::fs::create_dir_all(elsewhere.join("sub/made")).unwrap();
        std::fs::write(elsewhere.join("f.txt"), "victim").unwrap();
        std::fs::write(elsewhere.join("sub/f.txt"), "victim").unwrap();
        symlink("f.txt", elsewhere.join("l")).unwrap();
        symlink(&elsewhere, root.join("dir")).unwrap();
        std::fs::create_dir_all(root.join("up")).unwrap();
        symlink(&elsewhere, root.join("up/way")).unwrap();
        let listing = |dir: &Path| {
            let mut names: Vec<_> = walkdir_names(dir);
            names.sort();
            names
        };
        let before = listing(&elsewhere);
        for rel in [
            "dir/f.txt",
            "dir/l",
            "dir/sub/f.txt",
            "dir/sub/made",
            "up/way/f.txt",
            "up/way/sub/made",
            "dir/new/deeper/f.txt",
        ] {
            let path = root.join(rel);
            let linked = |r: Result<_, FileError>| matches!(r, Err(FileError::LinkAppeared(_)));
            assert!(linked(stat(&path).map(|_| ())), "stat {rel}");
            assert!(linked(read_link(&path).map(|_| ())), "read_link {rel}");
            for parents in [Parents::Existing, Parents::Create] {
                assert!(
                    linked(put_back(&path, b"PWNED", 0o4755, parents)),
                    "put_back {rel}"
                );
                assert!(
                    linked(put_link(&path, Path::new("/etc/passwd"), parents)),
                    "put_link {rel}"
                );
            }
            assert!(linked(remove(&path)), "remove {rel}");
            assert!(linked(remove_empty_dir(&path)), "remove_empty_dir {rel}");
        }
        assert_eq!(listing(&elsewhere), before);
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("sub/f.txt")).unwrap(),
            "victim"
        );

        // At the end of the path a link is the entry itself: replaced, removed, read.
        symlink(elsewhere.join("f.txt"), root.join("up/last")).unwrap();
        assert_eq!(
            stat(&root.join("up/last")).unwrap().map(|s| s.kind),
            Some(FileKind::Symlink)
        );
        assert_eq!(
            read_link(&root.join("up/last")).unwrap(),
            elsewhere.join("f.txt")
        );
        put_back(&root.join("up/last"), b"mine", 0o640, Parents::Existing).unwrap();
        let meta = std::fs::symlink_metadata(root.join("up/last")).unwrap();
        assert!(meta.is_file());
        assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
        put_link(&root.join("up/last"), Path::new("../x"), Parents::Existing).unwrap();
        assert_eq!(
            std::fs::read_link(root.join("up/last")).unwrap(),
            Path::new("../x")
        );
        symlink(&elsewhere, root.join("up/gone")).unwrap();
        remove(&root.join("up/gone")).unwrap();
        assert!(root.join("up/gone").symlink_metadata().is_err());
        symlink(&elsewhere, root.join("up/dirlink")).unwrap();
        assert!(remove_empty_dir(&root.join("up/dirlink")).is_err());
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("f.txt")).unwrap(),
            "victim"
        );
        assert_eq!(listing(&elsewhere), before);
        // Folders are refused where a file or link goes; missing parents are made.
        assert!(matches!(
            put_back(&root.join("up"), b"x", 0o644, Parents::Existing),
            Err(FileError::Directory)
        ));
        assert!(matches!(
            remove(&root.join("up")),
            Err(FileError::Directory)
        ));
        put_back(&root.join("a/b/c.txt"), b"x", 0o600, Parents::Create).unwrap();
        assert_eq!(std::fs::read(root.join("a/b/c.txt")).unwrap(), b"x");
        remove(&root.join("a/b/c.txt")).unwrap();
        remove(&root.join("a/b/c.txt")).unwrap();
        remove_empty_dir(&root.join("a/b")).unwrap();
        assert!(!root.join("a/b").exists());
    }

    /// Every path under `dir`, not following links.
    fn walkdir_names(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(here) = stack.pop() {
            for entry in std::fs::read_dir(&here).unwrap() {
                let path = entry.unwrap().path();
                if path.symlink_metadata().unwrap().is_dir() {
                    stack.push(path.clone());
                }
                out.push(path);
            }
        }
        out
    }

    #[test]
    fn fifos_sockets_and_devices_are_refused_without_blocking() {
        let (_d, root) = temp();
        let fifo = root.join("f.txt");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o644)).unwrap();
        let socket = root.join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        for (path, kind) in [
            (fifo.clone(), FileKind::Fifo),
            (socket.clone(), FileKind::Socket),
            (PathBuf::from("/dev/zero"), FileKind::CharDevice),
            (PathBuf::from("/dev/urandom"), FileKind::CharDevice),
            (PathBuf::from("/dev/null"), FileKind::CharDevice),
        ] {
            let read = open_read(&path);
            assert!(
                matches!(read, Err(FileError::NotRegular(k)) if k == kind),
                "{}: {read:?}",
                path.display()
            );
            assert_eq!(kind_of(&path).unwrap(), Some(kind));
        }
        for path in [&fifo, &socket] {
            let written = replace(path, b"x", Parents::Existing);
            assert!(
                matches!(written, Err(FileError::NotRegular(_))),
                "{written:?}"
            );
        }
        assert!(matches!(open_read(&root), Err(FileError::Directory)));
        assert!(matches!(
            replace(&root, b"x", Parents::Existing),
            Err(FileError::Directory)
        ));
        assert_eq!(
            open_read(&fifo).unwrap_err().to_string(),
            "it is a named pipe (FIFO); only regular files are read or written"
        );
    }

    #[test]
    fn a_file_on_the_way_is_not_a_folder_and_unresolved_paths_are_refused() {
        let (_d, root) = temp();
        std::fs::write(root.join("file"), "x").unwrap();
        let under = open_read(&root.join("file/inner"));
        assert!(
            matches!(under, Err(FileError::NotADirectory(_))),
            "{under:?}"
        );
        assert!(matches!(
            open_read(&root.join("missing/inner")),
            Err(FileError::NotFound)
        ));
        for bad in ["relative/x", "/a/../b"] {
            assert!(matches!(open_read(Path::new(bad)), Err(FileError::Io(_))));
        }
        assert_eq!(kind_of(&root.join("nothing")).unwrap(), None);
        assert_eq!(kind_of(Path::new("/")).unwrap(), Some(FileKind::Directory));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn openat2_is_used_where_the_kernel_has_it() {
        let (_d, root) = temp();
        // Either way the answer is the same; say which way this machine took.
        let fd = open_dir(&root, Parents::Existing).unwrap();
        assert_eq!(FileKind::of(&fstat(&fd).unwrap()), FileKind::Directory);
        eprintln!("openat2 available: {}", at_once::available());
    }
}
