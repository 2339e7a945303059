//! Where snapshot contents live: one folder per session under
//! `$HARNESS9_HOME/snapshots/` (never in the user's repository, never touching its index
//! or stash), holding each distinct content once, named by its SHA-256. Written through a
//! temporary file and a rename, so a crash leaves no half object. The folder is removed
//! when the session ends; folders older than a day that a crashed session left are
//! removed when the next one starts. It knows files, nothing of manifests.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::manifest::Digest;

/// How old an abandoned session's folder must be before it is removed.
const ABANDONED_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// One session's object store.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
}

fn hex(digest: &Digest) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl Store {
    /// A store for this session under `root` (`$HARNESS9_HOME/snapshots`), removing what
    /// crashed sessions left there long ago.
    pub fn new(root: &Path) -> Store {
        prune(root);
        let stamp = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        Store {
            dir: root.join(format!("{}-{stamp}", std::process::id())),
        }
    }

    fn path(&self, digest: &Digest) -> PathBuf {
        let name = hex(digest);
        self.dir.join(&name[..2]).join(&name[2..])
    }

    /// Keeps `bytes` under `digest` (once).
    pub fn put(&self, digest: &Digest, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.path(digest);
        if path.exists() {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            // Copies of the project's files (secrets among them, perhaps) are the user's
            // alone.
            std::os::unix::fs::DirBuilderExt::mode(
                std::fs::DirBuilder::new().recursive(true),
                0o700,
            )
            .create(dir)?;
        }
        let tmp = path.with_extension(
            format!("tmp{:?}", std::thread::current().id()).replace(['(', ')'], ""),
        );
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, &path)
    }

    /// The bytes kept under `digest`.
    pub fn get(&self, digest: &Digest) -> std::io::Result<Vec<u8>> {
        std::fs::read(self.path(digest))
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
