//! Artifacts: files a skill run saved, kept with the saved session (beside its file, in
//! `<id>.artifacts/`) so they survive a resume, each save of a name a new version.
//! `skill_run` saves them (`outputs.save`, `save_as_artifacts`) and reads them back
//! (`artifact://name[@version]` inputs); `harness9 artifacts list|get` shows them.
//!
//! The folder holds `index.jsonl` (one line per saved version: name, version, MIME
//! type, size, content file, time) and the contents under `blobs/`, written before
//! their index line, so a reader never sees a line without its content. Folders are
//! 0700 and files 0600. Names are relative paths (`chart.png`, `report/a.csv`) without
//! `..`, control characters or a leading `/`. It knows files; it must not know skills,
//! sessions' records or terminals.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod cli;

/// Longest artifact name, in bytes.
pub const MAX_NAME: usize = 200;

/// Why an artifact could not be saved or read.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// The name is not one an artifact can have.
    #[error("artifact name {name:?} {why}")]
    BadName {
        /// As given.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// No such artifact, or no such version of it.
    #[error("no artifact {wanted} in this session{known}")]
    Missing {
        /// `name` or `name@version`.
        wanted: String,
        /// The names there are, for the message.
        known: String,
    },
    /// The file system said no.
    #[error("artifacts in {}: {source}", dir.display())]
    Io {
        /// The session's artifacts folder.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// One saved version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactInfo {
    /// Its name.
    pub name: String,
    /// 1 for the first save of the name, then 2, ...
    pub version: u32,
    /// The MIME type it was saved with.
    pub mime: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its content file, relative to the folder.
    file: String,
    /// When it was saved, milliseconds since the Unix epoch.
    pub saved_ms: u64,
}

/// What a save returns: the name and the version it got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArtifactRef {
    /// The name.
    pub name: String,
    /// The version.
    pub version: u32,
}

/// One session's artifacts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactStore {
    dir: PathBuf,
}

impl ArtifactStore {
    /// The artifacts in `dir` (created on the first save).
    pub fn new(dir: PathBuf) -> ArtifactStore {
        ArtifactStore { dir }
    }

    /// Where they are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn io(&self, source: std::io::Error) -> ArtifactError {
        ArtifactError::Io {
            dir: self.dir.clone(),
            source,
        }
    }

    /// Every saved version, oldest first; none when nothing was saved.
    pub fn list(&self) -> Result<Vec<ArtifactInfo>, ArtifactError> {
        let text = match std::fs::read_to_string(self.dir.join("index.jsonl")) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io(e)),
        };
        // A torn last line (a crash while appending) is skipped.
        Ok(text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect())
    }

    /// Saves `bytes` as a new version of `name`.
    pub fn save(&self, name: &str, mime: &str, bytes: &[u8]) -> Result<ArtifactRef, ArtifactError> {
        check_name(name)?;
        let existing = self.list()?;
        let version = existing
            .iter()
            .filter(|a| a.name == name)
            .map(|a| a.version)
            .max()
            .unwrap_or(0)
            + 1;
        let blobs = self.dir.join("blobs");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .recursive(true)
            .create(&blobs)
            .map_err(|e| self.io(e))?;
        let file = format!("blobs/{}", existing.len() + 1);
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(self.dir.join(&file))
            .map_err(|e| self.io(e))?;
        out.write_all(bytes).map_err(|e| self.io(e))?;
        out.sync_all().map_err(|e| self.io(e))?;
        let info = ArtifactInfo {
            name: name.to_string(),
            version,
            mime: mime.to_string(),
            size: bytes.len() as u64,
            file,
            saved_ms: crate::sessions::record::now_ms(),
        };
        let mut line = serde_json::to_string(&info).map_err(|e| self.io(e.into()))?;
        line.push('\n');
        // After a torn last line, start on a line of our own.
        let index_path = self.dir.join("index.jsonl");
        let torn = std::fs::read(&index_path)
            .ok()
            .and_then(|raw| raw.last().copied())
            .is_some_and(|last| last != b'\n');
        if torn {
            line.insert(0, '\n');
        }
        let mut index = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&index_path)
            .map_err(|e| self.io(e))?;
        index.write_all(line.as_bytes()).map_err(|e| self.io(e))?;
        Ok(ArtifactRef {
            name: name.to_string(),
            version,
        })
    }

    /// The version of `name` asked for (the latest when `None`) and its content file.
    pub fn find(
        &self,
        name: &str,
        version: Option<u32>,
    ) -> Result<(ArtifactInfo, PathBuf), ArtifactError> {
        let all = self.list()?;
        let found = all
            .iter()
            .filter(|a| a.name == name && version.is_none_or(|v| a.version == v))
            .max_by_key(|a| a.version);
        match found {
            Some(info) => Ok((info.clone(), self.dir.join(&info.file))),
            None => {
                let mut names: Vec<&str> = all.iter().map(|a| a.name.as_str()).collect();
                names.dedup();
                names.sort_unstable();
                names.dedup();
                Err(ArtifactError::Missing {
                    wanted: match version {
                        Some(v) => format!("{name}@{v}"),
                        None => name.to_string(),
                    },
                    known: if names.is_empty() {
                        String::new()
                    } else {
                        format!(" (saved: {})", names.join(", "))
                    },
                })
            }
        }
    }
}

/// `name[@version]` split (a version is a positive number after the last `@`).
pub fn parse_ref(text: &str) -> (&str, Option<u32>) {
    match text.rsplit_once('@') {
        Some((name, v)) if !name.is_empty() => match v.parse::<u32>() {
            Ok(v) if v > 0 => (name, Some(v)),
            _ => (text, None),
        },
        _ => (text, None),
    }
}

fn check_name(name: &str) -> Result<(), ArtifactError> {
    let bad = |why| {
        Err(ArtifactError::BadName {
            name: name.to_string(),
            why,
        })
    };
    if name.is_empty() || name.len() > MAX_NAME {
        return bad("must be 1 to 200 bytes long");
    }
    if name.starts_with('/') || name.split('/').any(|part| part.is_empty() || part == "..") {
        return bad("must be a relative path without empty parts or `..`");
    }
    if name.chars().any(char::is_control) {
        return bad("may not hold control characters");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn saves_versions_and_finds_the_latest_or_the_one_asked() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path().join("s.artifacts"));
        assert!(store.list().unwrap().is_empty());
        let a1 = store.save("chart.png", "image/png", b"one").unwrap();
        let b1 = store.save("report/a.csv", "text/csv", b"x,y").unwrap();
        let a2 = store.save("chart.png", "image/png", b"two!").unwrap();
        assert_eq!((a1.version, b1.version, a2.version), (1, 1, 2));
        let (info, path) = store.find("chart.png", None).unwrap();
        assert_eq!((info.version, info.size), (2, 4));
        assert_eq!(std::fs::read(path).unwrap(), b"two!");
        let (_, path) = store.find("chart.png", Some(1)).unwrap();
        assert_eq!(std::fs::read(path).unwrap(), b"one");
        let missing = store.find("chart.png", Some(3)).unwrap_err().to_string();
        assert_eq!(
            missing,
            "no artifact chart.png@3 in this session (saved: chart.png, report/a.csv)"
        );
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(store.dir()), 0o700);
        assert_eq!(mode(&store.dir().join("index.jsonl")), 0o600);
        assert_eq!(store.list().unwrap().len(), 3);
    }

    #[test]
    fn bad_names_and_a_torn_index_line() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path().to_path_buf());
        for name in [
            "",
            "/etc/passwd",
            "a/../b",
            "a//b",
            "bad\u{1b}name",
            &"x".repeat(201),
        ] {
            assert!(
                matches!(
                    store.save(name, "text/plain", b""),
                    Err(ArtifactError::BadName { .. })
                ),
                "{name:?}"
            );
        }
        store.save("ok.txt", "text/plain", b"ok").unwrap();
        let mut index = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join("index.jsonl"))
            .unwrap();
        index.write_all(b"{\"name\":\"torn").unwrap();
        assert_eq!(store.list().unwrap().len(), 1);
        assert_eq!(
            store.save("ok.txt", "text/plain", b"v2").unwrap().version,
            2
        );
        assert_eq!(store.list().unwrap().len(), 2, "the new line is not lost");
    }

    #[test]
    fn references_split_at_the_last_at() {
        assert_eq!(parse_ref("chart.png"), ("chart.png", None));
        assert_eq!(parse_ref("chart.png@2"), ("chart.png", Some(2)));
        assert_eq!(parse_ref("me@host.txt"), ("me@host.txt", None));
        assert_eq!(parse_ref("a@0"), ("a@0", None));
        assert_eq!(parse_ref("@3"), ("@3", None));
    }
}
