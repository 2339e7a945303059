//! Where snapshot contents live: one folder per session under
//! `$HARNESS9_HOME/snapshots/` (never in the user's repository, never touching its index
//! or stash, created private), holding each distinct content once in an append-only
//! pack file, found through an index in memory by its SHA-256. One file written in order
//! costs far less than a file per content: the session's first picture of a
//! 100,000-file project copies them all. The folder is removed when the session ends;
//! folders older than a day that a crashed session left are removed when the next one
//! starts. It knows files, nothing of manifests.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use super::manifest::Digest;

/// How old an abandoned session's folder must be before it is removed.
const ABANDONED_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Default)]
struct Pack {
    /// Open once the first content arrives.
    file: Option<File>,
    /// Where the next content goes.
    end: u64,
    /// Where each content is: offset and length.
    index: HashMap<Digest, (u64, u64)>,
}

/// One session's content store.
pub struct Store {
    dir: PathBuf,
    pack: Mutex<Pack>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("dir", &self.dir).finish()
    }
}

impl Store {
    /// A store for this session under `root` (`$HARNESS9_HOME/snapshots`), removing what
    /// crashed sessions left there long ago. Nothing is created until content arrives.
    pub fn new(root: &Path) -> Store {
        prune(root);
        let stamp = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        Store {
            dir: root.join(format!("{}-{stamp}", std::process::id())),
            pack: Mutex::new(Pack::default()),
        }
    }

    fn pack(&self) -> MutexGuard<'_, Pack> {
        // Every update leaves the index describing what the file holds.
        self.pack.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether content `digest` is kept.
    pub fn has(&self, digest: &Digest) -> bool {
        self.pack().index.contains_key(digest)
    }

    /// Keeps `bytes` under `digest` (once).
    pub fn put(&self, digest: &Digest, bytes: &[u8]) -> std::io::Result<()> {
        let mut pack = self.pack();
        if pack.index.contains_key(digest) {
            return Ok(());
        }
        if pack.file.is_none() {
            // Copies of the project's files (secrets among them, perhaps) are the user's
            // alone.
            std::os::unix::fs::DirBuilderExt::mode(
                std::fs::DirBuilder::new().recursive(true),
                0o700,
            )
            .create(&self.dir)?;
            pack.file = Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .read(true)
                    .append(true)
                    .open(self.dir.join("pack"))?,
            );
        }
        let offset = pack.end;
        if let Some(file) = pack.file.as_mut() {
            file.write_all(bytes)?;
        }
        let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        pack.end += len;
        pack.index.insert(*digest, (offset, len));
        Ok(())
    }

    /// The bytes kept under `digest`.
    pub fn get(&self, digest: &Digest) -> std::io::Result<Vec<u8>> {
        let mut pack = self.pack();
        let Some(&(offset, len)) = pack.index.get(digest) else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "content not in the snapshot store",
            ));
        };
        let Some(file) = pack.file.as_mut() else {
            return Err(std::io::Error::other("the snapshot store has no pack"));
        };
        file.seek(SeekFrom::Start(offset))?;
        let mut bytes = vec![0; usize::try_from(len).unwrap_or(0)];
        file.read_exact(&mut bytes)?;
        Ok(bytes)
    }

    /// The store's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Removes session folders older than a day.
fn prune(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > ABANDONED_AFTER);
        if old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
