//! The command's file system, built in its own mount namespace (by the launcher's child,
//! which is PID 1 of a new PID namespace and has every capability in a new user
//! namespace), in this order:
//!
//! 1. nothing done here propagates outside (every mount private);
//! 2. `/dev/null`, `zero`, `full`, `random` and `urandom` get mounts of their own, so
//!    they stay usable when step 4 makes every other device node unusable;
//! 3. a fresh `/proc` (read-only) for the new PID namespace; a private `/dev/pts`
//!    instance, `/dev/ptmx` from it, and an empty tmpfs on `/dev/shm` (writable when the
//!    policy lets commands write there);
//! 4. every other mount a path can reach is remounted read-only, nosuid and nodev
//!    (keeping its noexec and atime flags, which a user namespace may not change);
//! 5. each writable folder, shallow ones first, is bound onto itself read-write, nosuid,
//!    nodev (a folder on a file system mounted read-only stays read-only);
//! 6. the protected paths inside (`.git/config`, `.git/hooks`, `.harness9`, …) are bound
//!    onto themselves read-only; a missing `.git/hooks` or `.git/info/attributes` is
//!    created empty first, so git cannot be given hooks or attributes there;
//! 7. masks, ancestors first: a folder gets an empty, read-only tmpfs (mode 000), or, when
//!    a visible or writable folder lies inside it, a tmpfs holding only those; a file (or
//!    socket) gets `/dev/null` on a nodev mount, so opening it fails.
//!
//! Any failure but a missing path ends the launch (the command does not run); the pty
//! and shm steps may fail harmlessly (what stays is read-only and nodev). It knows
//! mounts; it must not know Landlock, seccomp or processes.

use std::fs::DirBuilder;
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::mount::{MsFlags, mount};
use nix::sys::statvfs::{FsFlags, statvfs};

use super::mountinfo;
use crate::sandbox::SandboxPolicy;

/// Device nodes commands need, kept usable.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The flags a user namespace must keep when it remounts (besides the ones it adds).
fn kept(flags: MsFlags) -> MsFlags {
    let mut kept = flags
        & (MsFlags::MS_NOEXEC
            | MsFlags::MS_NOATIME
            | MsFlags::MS_NODIRATIME
            | MsFlags::MS_RELATIME
            | MsFlags::MS_NODEV
            | MsFlags::MS_NOSUID
            | MsFlags::from_bits_retain(libc::MS_NOSYMFOLLOW));
    if !flags.intersects(MsFlags::MS_NOATIME | MsFlags::MS_RELATIME) {
        kept |= MsFlags::MS_STRICTATIME;
    }
    kept
}

/// Why the file system could not be built.
#[derive(Debug, thiserror::Error)]
pub enum MountError {
    /// The mount table could not be read.
    #[error("cannot read the mount table: {0}")]
    Table(#[source] std::io::Error),
    /// A mount step failed.
    #[error("cannot {what} {}: {source}", path.display())]
    Mount {
        /// The step.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// The kernel's answer.
        #[source]
        source: Errno,
    },
    /// A folder or file for a mount could not be made.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// The step.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

fn step(what: &'static str, path: &Path) -> impl FnOnce(Errno) -> MountError {
    let path = path.to_path_buf();
    move |source| MountError::Mount { what, path, source }
}

const NONE: Option<&str> = None;

fn bind(source: &Path, target: &Path, what: &'static str) -> Result<(), MountError> {
    mount(
        Some(source),
        target,
        NONE,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        NONE,
    )
    .map_err(step(what, target))
}

fn remount(target: &Path, flags: MsFlags) -> Result<(), Errno> {
    mount(
        NONE,
        target,
        NONE,
        MsFlags::MS_REMOUNT | MsFlags::MS_BIND | flags,
        NONE,
    )
}

/// The flags of the mount `path` is on, as mount(2) takes them.
fn current_flags(path: &Path) -> Result<MsFlags, MountError> {
    let stat = statvfs(path).map_err(step("read the mount flags of", path))?;
    let pairs = [
        (FsFlags::ST_RDONLY, MsFlags::MS_RDONLY),
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ];
    Ok(pairs
        .iter()
        .filter(|(st, _)| stat.flags().contains(*st))
        .fold(MsFlags::empty(), |acc, (_, ms)| acc | *ms))
}

/// Builds the command's file system for `policy` (see the module's documentation).
pub fn build(policy: &SandboxPolicy) -> Result<(), MountError> {
    let root = Path::new("/");
    mount(
        NONE,
        root,
        NONE,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        NONE,
    )
    .map_err(step("make private the mounts under", root))?;
    for device in DEVICES.iter().map(Path::new).filter(|d| d.exists()) {
        bind(device, device, "keep the device")?;
    }
    let proc = Path::new("/proc");
    mount(
        Some("proc"),
        proc,
        Some("proc"),
        MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        NONE,
    )
    .map_err(step("mount a fresh /proc on", proc))?;
    let mut own = vec![proc];
    own.extend(private_dev(policy));
    read_only_everywhere(&own)?;
    writable_folders(policy)?;
    protected_paths(policy)?;
    masks(policy)
}

/// Step 4: every reachable mount read-only, nosuid and nodev (the kept device nodes
/// without nodev), but the fresh ones at `own`.
fn read_only_everywhere(own: &[&Path]) -> Result<(), MountError> {
    let table = super::read_proc("/proc/self/mountinfo").map_err(MountError::Table)?;
    let mounts = mountinfo::parse(&table);
    for m in mountinfo::visible(&mounts) {
        if own.contains(&m.path.as_path()) {
            continue;
        }
        let device = DEVICES.iter().any(|d| m.path == Path::new(d));
        let mut wanted = MsFlags::MS_RDONLY | MsFlags::MS_NOSUID;
        if !device {
            wanted |= MsFlags::MS_NODEV;
        }
        if m.flags.contains(wanted) && !device {
            continue;
        }
        match remount(&m.path, wanted | kept(m.flags)) {
            Ok(()) => {}
            // Gone since the table was read, or out of this user's reach (another
            // user's FUSE mount): nothing a path here can use.
            Err(Errno::ENOENT | Errno::EACCES) if m.path != Path::new("/") => {}
            Err(e) => return Err(step("make read-only", &m.path)(e)),
        }
    }
    Ok(())
}

/// Step 3's devices: a private pty instance and shared memory; where each was mounted.
/// Failing leaves the system's, which step 3 makes read-only and nodev, so it is not an
/// error.
fn private_dev(policy: &SandboxPolicy) -> Vec<&'static Path> {
    let mut made = Vec::new();
    let pts = Path::new("/dev/pts");
    let mounted = pts.is_dir()
        && mount(
            Some("devpts"),
            pts,
            Some("devpts"),
            MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
            Some("newinstance,ptmxmode=0666,mode=0620"),
        )
        .is_ok();
    if mounted {
        made.push(pts);
        let ptmx = Path::new("/dev/ptmx");
        if ptmx.exists() && bind(&pts.join("ptmx"), ptmx, "use the private ptmx as").is_ok() {
            made.push(ptmx);
        }
    }
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        let mut flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
        if !policy.writable.iter().any(|w| w == shm) {
            flags |= MsFlags::MS_RDONLY;
        }
        if mount(Some("tmpfs"), shm, Some("tmpfs"), flags, Some("mode=1777")).is_ok() {
            made.push(shm);
        }
    }
    made
}

/// Step 5: the writable folders.
fn writable_folders(policy: &SandboxPolicy) -> Result<(), MountError> {
    let mut roots: Vec<&PathBuf> = policy
        .writable
        .iter()
        .filter(|w| w.as_path() != Path::new("/dev/shm") && w.exists())
        .collect();
    roots.sort_by_key(|p| p.components().count());
    roots.dedup();
    for root in roots {
        bind(root, root, "bind the writable folder")?;
        let flags =
            (current_flags(root)? - MsFlags::MS_RDONLY) | MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
        match remount(root, kept(flags)) {
            Ok(()) => {}
            // Mounted read-only by the system: it stays so here too.
            Err(Errno::EPERM) => {}
            Err(e) => return Err(step("make writable", root)(e)),
        }
    }
    Ok(())
}

/// Step 6: the protected paths, read-only (nothing to do when nothing is writable).
fn protected_paths(policy: &SandboxPolicy) -> Result<(), MountError> {
    if policy.writable.is_empty() {
        return Ok(());
    }
    let git = policy.project.join(".git");
    if git.is_dir() {
        // Something to protect where git would read hooks or attributes a command could
        // otherwise create. (Read-only mode cannot, and then neither can the command.)
        let hooks = git.join("hooks");
        if std::fs::symlink_metadata(&hooks).is_err() {
            let _ = std::fs::create_dir(&hooks);
        }
        let attributes = git.join("info").join("attributes");
        if std::fs::symlink_metadata(&attributes).is_err() {
            let _ = std::fs::create_dir(git.join("info"));
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&attributes);
        }
    }
    for path in policy.read_only.iter().filter(|p| p.exists()) {
        bind(path, path, "protect")?;
        let flags =
            current_flags(path)? | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
        remount(path, kept(flags) | MsFlags::MS_RDONLY).map_err(step("make read-only", path))?;
    }
    Ok(())
}

/// Step 7: the masks.
fn masks(policy: &SandboxPolicy) -> Result<(), MountError> {
    let mut seen = std::collections::HashSet::new();
    let mut masked: Vec<&PathBuf> = policy.masked.iter().filter(|p| seen.insert(*p)).collect();
    masked.sort_by_key(|p| p.components().count());
    let exceptions: Vec<&PathBuf> = policy.visible.iter().chain(&policy.writable).collect();
    let mut templates = Templates::default();
    for path in masked {
        // Missing (or already hidden by a mask on a folder above it): nothing to hide.
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let inside: Vec<&Path> = exceptions
            .iter()
            .filter(|e| e.starts_with(path))
            .map(|e| e.as_path())
            .collect();
        if inside.contains(&path.as_path()) {
            continue;
        }
        if !meta.is_dir() {
            templates.mask_file(path)?;
        } else if inside.is_empty() {
            templates.mask_folder(path)?;
        } else {
            mask_folder_except(path, &inside)?;
        }
    }
    Ok(())
}

/// The first mask of each kind; later ones are bound from it (a bind copies its flags).
#[derive(Default)]
struct Templates {
    file: Option<PathBuf>,
    folder: Option<PathBuf>,
}

const MASK_FLAGS: MsFlags = MsFlags::MS_RDONLY
    .union(MsFlags::MS_NOSUID)
    .union(MsFlags::MS_NODEV)
    .union(MsFlags::MS_NOEXEC);

impl Templates {
    fn mask_file(&mut self, path: &Path) -> Result<(), MountError> {
        match &self.file {
            Some(template) => bind(template, path, "mask"),
            None => {
                bind(Path::new("/dev/null"), path, "mask")?;
                // nodev: opening the mask fails, for reading and for writing.
                remount(path, MASK_FLAGS).map_err(step("make unusable the mask on", path))?;
                self.file = Some(path.to_path_buf());
                Ok(())
            }
        }
    }

    fn mask_folder(&mut self, path: &Path) -> Result<(), MountError> {
        match &self.folder {
            Some(template) => bind(template, path, "mask"),
            None => {
                mount(
                    Some("tmpfs"),
                    path,
                    Some("tmpfs"),
                    MASK_FLAGS,
                    Some("mode=000,size=4k"),
                )
                .map_err(step("mask", path))?;
                self.folder = Some(path.to_path_buf());
                Ok(())
            }
        }
    }
}

/// A masked folder that keeps the folders in `inside` (visible or writable ones): an
/// empty tmpfs in which only they are mounted again, at the same places.
fn mask_folder_except(path: &Path, inside: &[&Path]) -> Result<(), MountError> {
    use rustix::mount::{MoveMountFlags, OpenTreeFlags, move_mount, open_tree};
    let mut kept: Vec<(&Path, OwnedFd, bool)> = Vec::new();
    for place in inside {
        let Ok(meta) = std::fs::metadata(place) else {
            continue;
        };
        let tree = open_tree(
            rustix::fs::CWD,
            *place,
            OpenTreeFlags::OPEN_TREE_CLONE
                | OpenTreeFlags::OPEN_TREE_CLOEXEC
                | OpenTreeFlags::AT_RECURSIVE,
        )
        .map_err(|e| step("keep visible", place)(Errno::from_raw(e.raw_os_error())))?;
        kept.push((place, tree, meta.is_dir()));
    }
    mount(
        Some("tmpfs"),
        path,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        Some("mode=0111"),
    )
    .map_err(step("mask", path))?;
    // Only traversable: nothing in it can be listed.
    let mut folders = DirBuilder::new();
    folders.recursive(true).mode(0o111);
    for (place, tree, is_dir) in kept {
        let made = if is_dir {
            folders.create(place)
        } else {
            place
                .parent()
                .map_or(Ok(()), |p| folders.create(p))
                .and_then(|()| std::fs::File::create(place).map(drop))
        };
        made.map_err(|source| MountError::Io {
            what: "make a place for",
            path: place.to_path_buf(),
            source,
        })?;
        move_mount(
            &tree,
            "",
            rustix::fs::CWD,
            place,
            MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
        )
        .map_err(|e| step("keep visible", place)(Errno::from_raw(e.raw_os_error())))?;
    }
    remount(path, MASK_FLAGS).map_err(step("make read-only the mask on", path))
}
