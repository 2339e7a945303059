//! One writer per session file. The writer holds an exclusive `flock` on the session
//! file itself (records are only ever appended, so the file is never replaced) for as
//! long as it lives; a second harness9 that tries to write the same session is refused
//! and told which process has it, found in `/proc/locks`. The lock goes with the
//! process, so one that was killed leaves nothing to clean up.
//!
//! It knows locks and processes; it must not know what is inside a session file.

use std::fs::File;
use std::path::Path;

use super::error::{IoAction, SessionError};

/// How long a writer keeps trying a lock that is held: [`writer_of`] (a listing, `-c`,
/// pruning in another process) holds it for the moment of its test, which must not
/// refuse a writer that starts in that moment. A real writer holds it far longer.
const PROBE_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// How long a writer waits for a lock whose taker has exited: the lock then lives on in
/// a process that inherited the file between a `fork` and its `exec` (a command a killed
/// harness9 was starting), or in a helper like flock(1), and goes when that one execs
/// or ends. Refusing at once would call a dead session "open in another process". The
/// taker counts as gone when its pid no longer holds the file open, not only when the
/// pid is free: pids are reused within seconds where `pid_max` is small (32768), and a
/// stranger with the dead taker's pid must not keep a session locked.
const ORPHAN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Takes the writer's lock on `file` (the session at `path`), or says who has it.
pub(super) fn lock_for_writing(file: &File, path: &Path) -> Result<(), SessionError> {
    let start = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < PROBE_GRACE => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let pid = holder_pid(file);
                if start.elapsed() < ORPHAN_GRACE && pid.is_some_and(|p| !holds(p, file)) {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    continue;
                }
                return Err(SessionError::InUse {
                    path: path.to_path_buf(),
                    pid,
                });
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(SessionError::io(IoAction::Read, path, e));
            }
        }
    }
}

/// Whether another writer has the session at `path` open, and which process: `None`
/// when it is free (or does not exist), `Some(None)` when held by a process that could
/// not be named. The lock is only tried, never kept (a writer starting in that moment
/// waits it out: [`PROBE_GRACE`]).
pub fn writer_of(path: &Path) -> Option<Option<u32>> {
    let file = File::open(path).ok()?;
    match file.try_lock() {
        Ok(()) => None,
        Err(std::fs::TryLockError::WouldBlock) => Some(holder_pid(&file)),
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// The process holding a `flock` on `file`, from `/proc/locks` (Linux): the line whose
/// device and inode are the file's.
fn holder_pid(file: &File) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = file.metadata().ok()?;
        let locks = std::fs::read_to_string("/proc/locks").ok()?;
        holder_in(&locks, meta.dev(), meta.ino())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// Whether process `pid` still has `file` open (Linux: one of its `/proc/PID/fd` entries
/// is the same file). A process whose descriptors cannot be read (another user's, or a
/// non-dumpable one such as a running harness9) is taken to hold it; elsewhere it is
/// assumed.
fn holds(pid: u32, file: &File) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(own) = file.metadata() else {
            return true;
        };
        let fds = match std::fs::read_dir(Path::new("/proc").join(pid.to_string()).join("fd")) {
            Ok(fds) => fds,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
            Err(_) => return true,
        };
        fds.flatten().any(|fd| {
            // `metadata` follows the descriptor's link to the open file itself.
            std::fs::metadata(fd.path())
                .is_ok_and(|meta| meta.dev() == own.dev() && meta.ino() == own.ino())
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pid, file);
        true
    }
}

/// Whether process `pid` still exists (Linux: its `/proc` entry; elsewhere assumed).
#[cfg(test)]
fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

/// The pid of a `FLOCK` line of `/proc/locks` text for the file `dev`/`ino`. A line
/// reads `1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF` (device major and minor in
/// hex, inode in decimal); waiters (`->`) are skipped.
fn holder_in(locks: &str, dev: u64, ino: u64) -> Option<u32> {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let wanted = format!("{major:02x}:{minor:02x}:{ino}");
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (kind, pid, file) = (fields.get(1)?, fields.get(4)?, fields.get(5)?);
        (*kind == "FLOCK" && *file == wanted).then(|| pid.parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_is_read_from_proc_locks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "x\n").unwrap();
        assert_eq!(writer_of(&path), None);
        let first = File::options().append(true).open(&path).unwrap();
        lock_for_writing(&first, &path).unwrap();
        assert_eq!(writer_of(&path), Some(Some(std::process::id())));
        let second = File::options().append(true).open(&path).unwrap();
        let refused = lock_for_writing(&second, &path).unwrap_err();
        assert!(
            matches!(refused, SessionError::InUse { pid: Some(p), .. } if p == std::process::id()),
            "{refused}"
        );
        drop(first);
        assert_eq!(writer_of(&path), None);
        lock_for_writing(&second, &path).unwrap();
    }

    /// A pid counts as the taker only while it has the file open: a stranger that got a
    /// dead taker's pid (reused within seconds where `pid_max` is small) does not.
    #[test]
    fn only_a_process_with_the_file_open_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "x\n").unwrap();
        let file = File::options().append(true).open(&path).unwrap();
        assert!(holds(std::process::id(), &file));
        let mut stranger = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert!(alive(stranger.id()));
        assert!(!holds(stranger.id(), &file));
        stranger.kill().unwrap();
        stranger.wait().unwrap();
        assert!(!holds(stranger.id(), &file));
    }

    /// flock(1) takes the lock on a shell's file and exits: `/proc/locks` names a process
    /// that is gone while the shell still holds the lock, as when a killed harness9's
    /// child holds it between fork and exec. A writer waits that out instead of calling
    /// the session open elsewhere, and still refuses if it lasts.
    #[test]
    fn a_lock_whose_taker_is_gone_is_waited_for_then_refused() {
        use std::io::{BufRead, Write};
        use std::process::{Command, Stdio};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "x\n").unwrap();
        let hold = |path: &Path| {
            let mut child = Command::new("sh")
                .args(["-c", "exec 9>>\"$0\"; flock -x 9; echo locked; read _"])
                .arg(path)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut line = String::new();
            std::io::BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            assert_eq!(line, "locked\n");
            child
        };

        let mut holder = hold(&path);
        let taker = writer_of(&path).expect("held").expect("named");
        assert!(!alive(taker), "flock(1) has exited");
        let file = File::options().append(true).open(&path).unwrap();
        let start = std::time::Instant::now();
        let refused = lock_for_writing(&file, &path).unwrap_err();
        assert!(start.elapsed() >= ORPHAN_GRACE, "{:?}", start.elapsed());
        assert!(matches!(refused, SessionError::InUse { .. }), "{refused}");

        // Released while the writer waits: the writer gets it.
        let (started, wait_started) = std::sync::mpsc::channel();
        let (path2, file2) = (path.clone(), file);
        let writer = std::thread::spawn(move || {
            started.send(()).unwrap();
            lock_for_writing(&file2, &path2)
        });
        wait_started.recv().unwrap();
        holder.stdin.take().unwrap().write_all(b"\n").unwrap();
        holder.wait().unwrap();
        writer.join().unwrap().unwrap();
        let _ = hold;
    }

    #[test]
    fn lines_of_other_files_kinds_and_waiters_are_skipped() {
        let locks = "1: POSIX  ADVISORY  WRITE 11 08:01:42 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 22 08:01:43 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 33 08:01:42 0 EOF\n\
                     3: FLOCK  ADVISORY  WRITE 44 08:01:42 0 EOF\n";
        let dev = (8 << 8) | 1;
        assert_eq!(holder_in(locks, dev, 42), Some(44));
        assert_eq!(holder_in(locks, dev, 99), None);
    }
}
