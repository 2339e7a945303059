//! The cache of remote roots on disk: one folder per URL (named by the archive's file
//! name and a stable hash of the URL), holding `meta.json` (the URL, its ETag and
//! Last-Modified, and which tree is current) and the extracted trees.
//!
//! An update unpacks into a fresh `.partial-*` folder, renames it to `tree-*`, then
//! replaces `meta.json` by a rename: that rename is the commit, so a crash or a refused
//! archive at any step leaves the previous tree in use. The tree it replaced is kept (a
//! session still running may read from it); older ones are removed. It knows nothing of
//! HTTP.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::RemoteLimits;
use super::extract::{self, ExtractError, Extracted};

/// The metadata file in a URL's folder.
const META_FILE: &str = "meta.json";
/// Prefix of extracted trees.
const TREE_PREFIX: &str = "tree-";
/// Prefix of trees being unpacked.
const PARTIAL_PREFIX: &str = ".partial-";
/// Prefix of metadata being written.
const META_TMP_PREFIX: &str = ".meta-";
/// Leftovers of an interrupted update older than this are removed.
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// A failure writing the cache.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// A file or folder in the cache cannot be written.
    #[error("cannot write the cache at {}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The unpacking thread failed.
    #[error("the unpacking worker failed: {reason}")]
    Worker {
        /// What happened.
        reason: String,
    },
}

/// Why an update was not installed.
#[derive(Debug)]
pub(super) enum InstallError {
    Extract(ExtractError),
    Cache(CacheError),
}

/// What `meta.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Meta {
    /// The URL this folder caches (a hash collision is detected by comparing it).
    pub url: String,
    /// The ETag the server sent, to send back as If-None-Match.
    pub etag: Option<String>,
    /// The Last-Modified the server sent, to send back as If-Modified-Since.
    pub last_modified: Option<String>,
    /// The current tree's folder name (`tree-...`).
    pub tree: String,
    /// When it was downloaded (seconds since the Unix epoch).
    pub downloaded_at: u64,
}

/// The cache folder of one URL.
#[derive(Debug, Clone)]
pub(super) struct Slot {
    dir: PathBuf,
    url: String,
}

impl Slot {
    /// The folder for `url` below `cache_dir`.
    pub(super) fn for_url(cache_dir: &Path, url: &str) -> Slot {
        Slot {
            dir: cache_dir.join(slot_name(url)),
            url: url.to_string(),
        }
    }

    /// The cached copy, when there is a usable one for this URL.
    pub(super) fn current(&self) -> Option<Meta> {
        let text = fs::read_to_string(self.dir.join(META_FILE)).ok()?;
        let meta: Meta = serde_json::from_str(&text)
            .ok()
            .filter(|m: &Meta| m.url == self.url)?;
        let plain_name = meta.tree.starts_with(TREE_PREFIX)
            && !meta.tree.contains(['/', '\\'])
            && meta.tree != "."
            && meta.tree != "..";
        (plain_name && self.dir.join(&meta.tree).is_dir()).then_some(meta)
    }

    /// The extracted tree `meta` names.
    pub(super) fn tree_dir(&self, meta: &Meta) -> PathBuf {
        self.dir.join(&meta.tree)
    }

    /// Unpacks `body` and makes it the current tree. Returns the tree and what was
    /// unpacked. On failure the previous tree stays current.
    pub(super) fn install(
        &self,
        body: &[u8],
        etag: Option<String>,
        last_modified: Option<String>,
        limits: &RemoteLimits,
    ) -> Result<(PathBuf, Extracted), InstallError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| InstallError::Cache(CacheError::Io { path, source })
        };
        fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let unique = unique_suffix();
        let partial = self.dir.join(format!("{PARTIAL_PREFIX}{unique}"));
        fs::create_dir(&partial).map_err(io(&partial))?;
        let mut extracted = match extract::extract(body, &partial, limits) {
            Ok(x) => x,
            Err(e) => {
                let _ = fs::remove_dir_all(&partial);
                return Err(InstallError::Extract(e));
            }
        };
        if extracted.files == 0 {
            extracted
                .warnings
                .push("the archive holds no files".to_string());
        }
        let tree_name = format!("{TREE_PREFIX}{unique}");
        let tree = self.dir.join(&tree_name);
        if let Err(e) = fs::rename(&partial, &tree) {
            let _ = fs::remove_dir_all(&partial);
            return Err(io(&tree)(e));
        }
        let previous = self.current().map(|m| m.tree);
        let meta = Meta {
            url: self.url.clone(),
            etag,
            last_modified,
            tree: tree_name.clone(),
            downloaded_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        if let Err(e) = self.write_meta(&meta, &unique) {
            let _ = fs::remove_dir_all(&tree);
            return Err(InstallError::Cache(e));
        }
        self.remove_old(&tree_name, previous.as_deref());
        Ok((tree, extracted))
    }

    /// Writes `meta.json` through a temporary file and a rename.
    fn write_meta(&self, meta: &Meta, unique: &str) -> Result<(), CacheError> {
        let tmp = self.dir.join(format!("{META_TMP_PREFIX}{unique}"));
        let target = self.dir.join(META_FILE);
        let text = serde_json::to_string_pretty(meta).map_err(|e| CacheError::Io {
            path: target.clone(),
            source: io::Error::other(e),
        })?;
        let written = fs::File::create(&tmp).and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        });
        if let Err(source) = written {
            let _ = fs::remove_file(&tmp);
            return Err(CacheError::Io { path: tmp, source });
        }
        fs::rename(&tmp, &target).map_err(|source| {
            let _ = fs::remove_file(&tmp);
            CacheError::Io {
                path: target,
                source,
            }
        })
    }

    /// Best effort: removes trees other than `current` and `previous`, and leftovers of
    /// interrupted updates that are older than [`STALE_AFTER`] (a younger one may be
    /// another process's update in progress).
    fn remove_old(&self, current: &str, previous: Option<&str>) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            let path = entry.path();
            if name.starts_with(TREE_PREFIX) {
                if name != current && Some(name) != previous {
                    let _ = fs::remove_dir_all(&path);
                }
            } else if (name.starts_with(PARTIAL_PREFIX) || name.starts_with(META_TMP_PREFIX))
                && is_stale(&path)
            {
                if path.is_dir() {
                    let _ = fs::remove_dir_all(&path);
                } else {
                    let _ = fs::remove_file(&path);
                }
            }
        }
    }
}

fn is_stale(path: &Path) -> bool {
    fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > STALE_AFTER)
}

/// A name unique to this process and moment: pid, nanoseconds, a counter.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}-{nanos}-{n}", std::process::id())
}

/// `<archive file name>-<16 hex digits of FNV-1a of the URL>`: readable and stable
/// across runs and Rust versions.
pub(super) fn slot_name(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let file = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    let label: String = file
        .chars()
        .take(40)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let label = label.trim_start_matches('.');
    let label = if label.is_empty() { "archive" } else { label };
    format!("{label}-{:016x}", fnv1a(url.as_bytes()))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tar archive holding one file `path` with `content`.
    fn tar_of(path: &str, content: &[u8]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        builder.append_data(&mut header, path, content).unwrap();
        builder.into_inner().unwrap()
    }

    #[test]
    fn slot_names_are_readable_stable_and_distinct() {
        assert_eq!(
            slot_name("https://example.com/a/skills.zip"),
            format!(
                "skills.zip-{:016x}",
                fnv1a(b"https://example.com/a/skills.zip")
            )
        );
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c, "FNV-1a 64 test vector");
        assert!(slot_name("https://x/dl?id=1").starts_with("dl-"));
        assert!(slot_name("https://x/").starts_with("x-"));
        assert!(slot_name("https://x/..").starts_with("archive-"));
        assert_ne!(
            slot_name("https://x/a.zip?v=1"),
            slot_name("https://x/a.zip?v=2")
        );
    }

    /// A slot for `url` in a temporary cache folder (kept while the first value lives).
    fn slot_for(url: &str) -> (tempfile::TempDir, Slot) {
        let tmp = tempfile::tempdir().unwrap();
        let slot = Slot::for_url(tmp.path(), url);
        (tmp, slot)
    }

    #[test]
    fn a_meta_naming_a_folder_outside_the_slot_is_ignored() {
        let (_tmp, slot) = slot_for("http://h/a.zip");
        fs::create_dir_all(&slot.dir).unwrap();
        let meta = |tree: &str| Meta {
            url: "http://h/a.zip".into(),
            etag: None,
            last_modified: None,
            tree: tree.into(),
            downloaded_at: 0,
        };
        for tree in ["../..", "tree-x/../..", "other"] {
            fs::write(
                slot.dir.join(META_FILE),
                serde_json::to_string(&meta(tree)).unwrap(),
            )
            .unwrap();
            assert_eq!(slot.current(), None, "{tree}");
        }
        fs::create_dir(slot.dir.join("tree-1")).unwrap();
        fs::write(
            slot.dir.join(META_FILE),
            serde_json::to_string(&meta("tree-1")).unwrap(),
        )
        .unwrap();
        assert_eq!(slot.current(), Some(meta("tree-1")));
    }

    #[test]
    fn a_refused_archive_leaves_the_current_tree_and_no_leftovers() {
        let (_tmp, slot) = slot_for("http://h/a.tar");
        let limits = RemoteLimits::default();
        let good = tar_of("s/SKILL.md", b"hi");
        let (tree, _) = slot
            .install(&good, Some("\"1\"".into()), None, &limits)
            .unwrap();
        let before = slot.current().unwrap();
        assert_eq!(slot.tree_dir(&before), tree);
        let err = slot
            .install(b"not an archive", None, None, &limits)
            .unwrap_err();
        assert!(matches!(
            err,
            InstallError::Extract(ExtractError::NotAnArchive { .. })
        ));
        assert_eq!(slot.current(), Some(before));
        let names: Vec<String> = fs::read_dir(&slot.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert_eq!(fs::read_to_string(tree.join("s/SKILL.md")).unwrap(), "hi");
    }

    #[test]
    fn updates_keep_the_previous_tree_and_remove_older_ones() {
        let (_tmp, slot) = slot_for("http://h/a.tar");
        let limits = RemoteLimits::default();
        let body = tar_of("f", b"x");
        let mut trees = Vec::new();
        for _ in 0..3 {
            trees.push(slot.install(&body, None, None, &limits).unwrap().0);
        }
        assert!(!trees[0].exists());
        assert!(trees[1].is_dir());
        assert!(trees[2].is_dir());
        assert_eq!(slot.tree_dir(&slot.current().unwrap()), trees[2]);
    }
}
