//! Bringing a plugin's files in: a copy of a folder made without following any link
//! (links, FIFOs and devices are skipped and reported; files, bytes and depth capped;
//! the executable bit kept), a shallow `git clone` with the system `git` that runs no
//! hook, and the content hash of an installed folder (SHA-256 over every path, kind,
//! executable bit and content, in name order), which `trust` records.
//!
//! It knows files and git; it must not know manifests or trust.

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use super::{PluginError, Problem};
use crate::nofollow::{self, FileKind};

/// The most files a plugin may hold.
pub const MAX_FILES: usize = 5_000;
/// The most bytes a plugin may hold.
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The deepest folder nesting copied.
pub const MAX_DEPTH: usize = 16;

/// Why a copy, a clone or a hash failed as a whole.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// A limit was passed: nothing is installed.
    #[error("{path}: {what}; the plugin was not added", path = path.display())]
    Limit {
        /// Where.
        path: PathBuf,
        /// Which limit.
        what: String,
    },
    /// A file or folder could not be read or written.
    #[error("{path}: {reason}", path = path.display())]
    Io {
        /// Where.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `git` could not be run or failed.
    #[error("git clone {url} failed: {reason}")]
    Git {
        /// The URL.
        url: String,
        /// Its stderr, or why it could not run.
        reason: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FetchError + '_ {
    move |e| FetchError::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

struct Budget {
    files: usize,
    bytes: u64,
}

/// Copies the folder `from` (resolved) to `to` (created, must not exist), following no
/// link, `.git` left out. Entries skipped are returned with why.
pub fn copy_tree(from: &Path, to: &Path) -> Result<Vec<PluginError>, FetchError> {
    let mut skipped = Vec::new();
    let mut budget = Budget { files: 0, bytes: 0 };
    fs::create_dir_all(to).map_err(io(to))?;
    copy_dir(from, to, 0, &mut budget, &mut skipped)?;
    Ok(skipped)
}

fn sorted_entries(dir: &Path) -> Result<Vec<(std::ffi::OsString, FileKind)>, FetchError> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        let kind = nofollow::kind_of(&path)
            .map_err(|e| FetchError::Io {
                path: path.clone(),
                reason: e.to_string(),
            })?
            .unwrap_or(FileKind::Other);
        out.push((entry.file_name(), kind));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn copy_dir(
    from: &Path,
    to: &Path,
    depth: usize,
    budget: &mut Budget,
    skipped: &mut Vec<PluginError>,
) -> Result<(), FetchError> {
    if depth > MAX_DEPTH {
        return Err(FetchError::Limit {
            path: from.to_path_buf(),
            what: format!("folders nest deeper than {MAX_DEPTH}"),
        });
    }
    for (name, kind) in sorted_entries(from)? {
        let (src, dst) = (from.join(&name), to.join(&name));
        if depth == 0 && name == ".git" {
            continue;
        }
        match kind {
            FileKind::Directory => {
                fs::create_dir(&dst).map_err(io(&dst))?;
                copy_dir(&src, &dst, depth + 1, budget, skipped)?;
            }
            FileKind::Regular => copy_file(&src, &dst, budget)?,
            FileKind::Symlink => skipped.push(PluginError {
                path: src,
                problem: Problem::Link,
            }),
            _ => skipped.push(PluginError {
                path: src,
                problem: Problem::Special,
            }),
        }
    }
    Ok(())
}

fn copy_file(src: &Path, dst: &Path, budget: &mut Budget) -> Result<(), FetchError> {
    budget.files += 1;
    if budget.files > MAX_FILES {
        return Err(FetchError::Limit {
            path: src.to_path_buf(),
            what: format!("more than {MAX_FILES} files"),
        });
    }
    let file = nofollow::open_read(src).map_err(|e| FetchError::Io {
        path: src.to_path_buf(),
        reason: e.to_string(),
    })?;
    let executable = file
        .metadata()
        .map(|m| m.permissions().mode() & 0o111 != 0)
        .map_err(io(src))?;
    let left = MAX_BYTES - budget.bytes;
    let mut bytes = Vec::new();
    file.take(left + 1)
        .read_to_end(&mut bytes)
        .map_err(io(src))?;
    budget.bytes += bytes.len() as u64;
    if budget.bytes > MAX_BYTES {
        return Err(FetchError::Limit {
            path: src.to_path_buf(),
            what: format!("more than {MAX_BYTES} bytes"),
        });
    }
    let mode = if executable { 0o755 } else { 0o644 };
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(dst)
        .map_err(io(dst))?;
    out.write_all(&bytes).map_err(io(dst))
}

use std::os::unix::fs::OpenOptionsExt;

/// Clones `url` into `to` (must not exist): shallow, one branch, no tags, no
/// submodules, with every git hook pointed at `/dev/null` and no terminal prompt.
pub fn git_clone(url: &str, to: &Path) -> Result<(), FetchError> {
    let failed = |reason: String| FetchError::Git {
        url: url.to_string(),
        reason,
    };
    let out = Command::new("git")
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "protocol.ext.allow=never",
            "clone",
            "--depth",
            "1",
            "--single-branch",
            "--no-tags",
            "--quiet",
            "--",
            url,
        ])
        .arg(to)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| failed(e.to_string()))?;
    if out.status.success() {
        Ok(())
    } else {
        let text = String::from_utf8_lossy(&out.stderr);
        Err(failed(text.trim().chars().take(2000).collect()))
    }
}

/// The content hash of the installed folder `root`: `sha256:` and hex. Every entry
/// counts (a link or a FIFO planted later changes it), so any change shows.
pub fn content_hash(root: &Path) -> Result<String, FetchError> {
    let mut hasher = Sha256::new();
    let mut budget = Budget { files: 0, bytes: 0 };
    hash_dir(root, Path::new(""), 0, &mut hasher, &mut budget)?;
    let digest = hasher.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}

fn hash_dir(
    dir: &Path,
    rel: &Path,
    depth: usize,
    hasher: &mut Sha256,
    budget: &mut Budget,
) -> Result<(), FetchError> {
    if depth > MAX_DEPTH {
        return Err(FetchError::Limit {
            path: dir.to_path_buf(),
            what: format!("folders nest deeper than {MAX_DEPTH}"),
        });
    }
    for (name, kind) in sorted_entries(dir)? {
        let (path, rel) = (dir.join(&name), rel.join(&name));
        let label = rel.as_os_str().as_encoded_bytes();
        let mut field = |tag: &[u8], bytes: &[u8]| {
            hasher.update(tag);
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        match kind {
            FileKind::Directory => {
                field(b"D", label);
                hash_dir(&path, &rel, depth + 1, hasher, budget)?;
            }
            FileKind::Regular => {
                let file = nofollow::open_read(&path).map_err(|e| FetchError::Io {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
                let exec = file
                    .metadata()
                    .map(|m| m.permissions().mode() & 0o111 != 0)
                    .map_err(io(&path))?;
                let mut bytes = Vec::new();
                file.take(MAX_BYTES + 1)
                    .read_to_end(&mut bytes)
                    .map_err(io(&path))?;
                budget.files += 1;
                budget.bytes += bytes.len() as u64;
                if budget.files > MAX_FILES || budget.bytes > MAX_BYTES {
                    return Err(FetchError::Limit {
                        path,
                        what: "more files or bytes than a plugin may hold".into(),
                    });
                }
                field(if exec { b"X" } else { b"F" }, label);
                field(b"C", &bytes);
            }
            FileKind::Symlink => {
                let target = nofollow::read_link(&path).unwrap_or_default();
                field(b"L", label);
                field(b"T", target.as_os_str().as_encoded_bytes());
            }
            _ => field(b"S", label),
        }
    }
    Ok(())
}
