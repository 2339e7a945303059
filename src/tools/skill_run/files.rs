//! The files side of `skill_run`: the JSON report the model sees, and the files
//! collected into it from the run's workspace (`output_files`, or the `outputs`
//! manifest) with MIME types, within limits on count and bytes and the tool output
//! limit. Knows nothing of processes or of the tool trait.

use std::path::Path;

use globset::GlobSet;
use serde::Serialize;

/// Output files returned per call at most (`output_files`).
pub const MAX_FILES: usize = 20;
/// Bytes of inline file content per call at most (`output_files`; also bounded by the
/// output limit).
pub const MAX_FILES_BYTES: usize = 256 * 1024;
/// The `outputs` manifest's limits, by default and at most: files, bytes per file,
/// bytes in all.
pub const OUTPUTS_MAX_FILES: usize = 100;
pub const OUTPUTS_MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
pub const OUTPUTS_MAX_TOTAL_BYTES: u64 = 64 * 1024 * 1024;

/// How a collected file comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Content {
    /// Inline, or left out when its content has no room (`output_files`).
    InlineOrOmit,
    /// Inline where there is room, else listed without its content (`outputs`).
    InlineOrListed,
    /// Listed without content (`outputs` with `inline: false`, `omit_inline_content`).
    NamesOnly,
}

/// Which files to collect and how.
#[derive(Debug, Clone)]
pub(super) struct Collect {
    pub(super) globs: GlobSet,
    pub(super) max_files: usize,
    pub(super) max_file_bytes: u64,
    pub(super) max_total_bytes: u64,
    pub(super) content: Content,
    /// Save every collected file as an artifact.
    pub(super) save: Option<SaveAs>,
}

/// How collected files are saved as artifacts: named `prefix` + their path (below
/// `out/` when they are there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SaveAs {
    pub(super) prefix: String,
}

impl SaveAs {
    fn name(&self, path: &str) -> String {
        format!(
            "{}{}",
            self.prefix,
            path.strip_prefix("out/").unwrap_or(path)
        )
    }
}

impl Collect {
    /// `output_files`: 20 files, their content inline within 256 KiB.
    pub(super) fn output_files(globs: GlobSet, content: Content) -> Collect {
        Collect {
            globs,
            max_files: MAX_FILES,
            max_file_bytes: MAX_FILES_BYTES as u64,
            max_total_bytes: u64::MAX,
            content,
            save: None,
        }
    }
}
/// Entries visited below `WORK_DIR` when matching `output_files`.
const MAX_WALK_ENTRIES: usize = 10_000;
/// Room kept for the list of omitted files.
const OMITTED_RESERVE: usize = 1_500;

/// The result the model sees, as compact JSON.
#[derive(Debug, Serialize)]
pub(super) struct Report {
    pub(super) exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) signal: Option<String>,
    pub(super) timed_out: bool,
    pub(super) duration_ms: u64,
    pub(super) stdout: String,
    pub(super) stderr: String,
    /// What the declared inputs put in the workspace.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) inputs: Vec<super::inputs::Staged>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) files: Option<Vec<FileEntry>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) files_omitted: Vec<Omitted>,
    #[serde(skip_serializing_if = "is_zero")]
    pub(super) files_omitted_more: usize,
    /// What was saved as artifacts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) artifact_files: Vec<crate::artifacts::ArtifactRef>,
    /// Why saving failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) artifact_error: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One returned file.
#[derive(Debug, Serialize)]
pub(super) struct FileEntry {
    /// Relative to the workspace, `/`-separated.
    path: String,
    mime: &'static str,
    size: u64,
    /// `utf-8` (content is the text) or `base64`; absent without content.
    #[serde(skip_serializing_if = "Option::is_none")]
    encoding: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<String>,
    /// Why the content is not here, when it could have been.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

/// A matching file that was left out.
#[derive(Debug, Serialize)]
pub(super) struct Omitted {
    path: String,
    size: u64,
    reason: String,
}

impl Report {
    pub(super) fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Adds the files of the workspace at `root` that `collect` asks for (never the
    /// staged skill), keeping the whole JSON within `max_output` bytes.
    pub(super) fn with_files(
        mut self,
        root: &Path,
        collect: &Collect,
        store: Option<&crate::artifacts::ArtifactStore>,
        max_output: usize,
    ) -> Report {
        self.files = Some(Vec::new());
        let base = self.to_json().len();
        let mut room = max_output
            .saturating_sub(base + OMITTED_RESERVE)
            .min(MAX_FILES_BYTES);
        let (matches, walk_capped) = matching_files(root, &collect.globs);
        let mut files = Vec::new();
        let mut omitted = Vec::new();
        let mut total = 0u64;
        for (path, size) in matches {
            let leave_out = |reason: String| Omitted {
                path: path.clone(),
                size,
                reason,
            };
            if files.len() >= collect.max_files {
                let max = collect.max_files;
                omitted.push(leave_out(format!("over the limit of {max} files")));
                continue;
            }
            if size > collect.max_file_bytes {
                let max = collect.max_file_bytes;
                omitted.push(leave_out(format!("over the limit of {max} bytes per file")));
                continue;
            }
            if total.saturating_add(size) > collect.max_total_bytes {
                let max = collect.max_total_bytes;
                omitted.push(leave_out(format!("over the limit of {max} bytes in all")));
                continue;
            }
            let bytes = match std::fs::read(root.join(&path)) {
                Ok(bytes) => bytes,
                Err(e) => {
                    omitted.push(leave_out(format!("cannot read: {e}")));
                    continue;
                }
            };
            let mut entry = file_entry(path.clone(), &bytes);
            if let (Some(save), Some(store)) = (&collect.save, store)
                && self.artifact_error.is_none()
            {
                match store.save(&save.name(&path), entry.mime, &bytes) {
                    Ok(saved) => self.artifact_files.push(saved),
                    Err(e) => self.artifact_error = Some(e.to_string()),
                }
            }
            let listed = |mut entry: FileEntry, note: Option<String>| {
                entry.encoding = None;
                entry.content = None;
                entry.note = note;
                entry
            };
            let cost = serde_json::to_string(&entry).map_or(usize::MAX, |s| s.len() + 1);
            if collect.content == Content::NamesOnly {
                entry = listed(entry, None);
            } else if usize::try_from(size).map_or(true, |s| s > room) || cost > room {
                let why = format!(
                    "too large to show ({cost} bytes encoded): {room} bytes of the output \
                     budget were left"
                );
                if collect.content == Content::InlineOrOmit {
                    omitted.push(leave_out(why));
                    continue;
                }
                entry = listed(entry, Some(why));
            }
            let cost = serde_json::to_string(&entry).map_or(usize::MAX, |s| s.len() + 1);
            if cost > room {
                omitted.push(leave_out(format!(
                    "no room left in the output budget ({room} bytes) to list it"
                )));
                continue;
            }
            room -= cost;
            total += size;
            files.push(entry);
        }
        if walk_capped {
            omitted.push(Omitted {
                path: String::new(),
                size: 0,
                reason: format!("WORK_DIR has over {MAX_WALK_ENTRIES} entries; stopped looking"),
            });
        }
        self.files = Some(files);
        // Keep as many omissions as fit; count the rest.
        let mut used = 0;
        for item in omitted {
            let cost = serde_json::to_string(&item).map_or(usize::MAX, |s| s.len() + 1);
            if self.files_omitted_more == 0 && used + cost + 40 <= OMITTED_RESERVE {
                used += cost;
                self.files_omitted.push(item);
            } else {
                self.files_omitted_more += 1;
            }
        }
        self
    }
}

/// Regular files below `root` but outside its `skills/` (symlinks are not followed) whose
/// relative path matches, sorted, with their sizes; true when the walk stopped at its
/// entry limit.
fn matching_files(root: &Path, globs: &GlobSet) -> (Vec<(String, u64)>, bool) {
    let work = root;
    let staged = root.join("skills");
    let mut found = Vec::new();
    let mut pending = vec![work.to_path_buf()];
    let mut visited = 0;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            visited += 1;
            if visited > MAX_WALK_ENTRIES {
                found.sort();
                return (found, true);
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                if path != staged {
                    pending.push(path);
                }
            } else if kind.is_file() {
                let Ok(relative) = path.strip_prefix(work) else {
                    continue;
                };
                let relative: Vec<String> = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                let relative = relative.join("/");
                if globs.is_match(&relative) {
                    let size = entry.metadata().map_or(0, |m| m.len());
                    found.push((relative, size));
                }
            }
        }
    }
    found.sort();
    (found, false)
}

fn file_entry(path: String, bytes: &[u8]) -> FileEntry {
    let (mime, text_kind) = mime_of(&path);
    let as_text = match text_kind {
        Some(true) | None => std::str::from_utf8(bytes)
            .ok()
            .filter(|t| text_kind.is_some() || !t.contains('\0')),
        Some(false) => None,
    };
    let mime = match (text_kind, as_text.is_some()) {
        (None, true) => "text/plain",
        _ => mime,
    };
    let size = bytes.len() as u64;
    match as_text {
        Some(text) => FileEntry {
            path,
            mime,
            size,
            encoding: Some("utf-8"),
            content: Some(text.to_string()),
            note: None,
        },
        None => FileEntry {
            path,
            mime,
            size,
            encoding: Some("base64"),
            content: Some(base64(bytes)),
            note: None,
        },
    }
}

/// The MIME type for a file name's extension, and whether it is text (`None`: unknown,
/// decided by looking at the bytes).
fn mime_of(path: &str) -> (&'static str, Option<bool>) {
    let extension = path
        .rsplit('/')
        .next()
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .unwrap_or_default();
    let text = |mime| (mime, Some(true));
    let binary = |mime| (mime, Some(false));
    match extension.as_str() {
        "txt" | "log" | "text" => text("text/plain"),
        "md" | "markdown" => text("text/markdown"),
        "csv" => text("text/csv"),
        "tsv" => text("text/tab-separated-values"),
        "html" | "htm" => text("text/html"),
        "css" => text("text/css"),
        "js" | "mjs" => text("text/javascript"),
        "json" => text("application/json"),
        "xml" => text("application/xml"),
        "yaml" | "yml" => text("application/yaml"),
        "toml" => text("application/toml"),
        "svg" => text("image/svg+xml"),
        "sh" => text("application/x-sh"),
        "py" => text("text/x-python"),
        "rs" => text("text/x-rust"),
        "go" => text("text/x-go"),
        "c" | "h" => text("text/x-c"),
        "diff" | "patch" => text("text/x-diff"),
        "png" => binary("image/png"),
        "jpg" | "jpeg" => binary("image/jpeg"),
        "gif" => binary("image/gif"),
        "webp" => binary("image/webp"),
        "bmp" => binary("image/bmp"),
        "ico" => binary("image/vnd.microsoft.icon"),
        "pdf" => binary("application/pdf"),
        "zip" => binary("application/zip"),
        "gz" | "tgz" => binary("application/gzip"),
        "tar" => binary("application/x-tar"),
        "wasm" => binary("application/wasm"),
        "mp3" => binary("audio/mpeg"),
        "wav" => binary("audio/wav"),
        "mp4" => binary("video/mp4"),
        "docx" => binary("application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        "xlsx" => binary("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        "bin" => binary("application/octet-stream"),
        _ => ("application/octet-stream", None),
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b1 = chunk.get(1).copied().unwrap_or(0);
        let b2 = chunk.get(2).copied().unwrap_or(0);
        let n = u32::from(chunk[0]) << 16 | u32::from(b1) << 8 | u32::from(b2);
        let digit = |shift: u32| char::from(ALPHABET[((n >> shift) & 63) as usize]);
        out.push(digit(18));
        out.push(digit(12));
        out.push(if chunk.len() > 1 { digit(6) } else { '=' });
        out.push(if chunk.len() > 2 { digit(0) } else { '=' });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_vectors() {
        for (raw, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), encoded);
        }
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    #[test]
    fn files_are_text_or_base64_by_extension_then_content() {
        let e = file_entry("a.md".into(), b"# hi");
        assert_eq!(
            (e.mime, e.encoding, e.content.as_deref()),
            ("text/markdown", Some("utf-8"), Some("# hi"))
        );
        let e = file_entry("x/IMG.PNG".into(), b"abc");
        assert_eq!(
            (e.mime, e.encoding, e.content.as_deref()),
            ("image/png", Some("base64"), Some("YWJj"))
        );
        let e = file_entry("bad.txt".into(), &[0xff, 0x00]);
        assert_eq!((e.mime, e.encoding), ("text/plain", Some("base64")));
        let e = file_entry("noext".into(), b"hello");
        assert_eq!((e.mime, e.encoding), ("text/plain", Some("utf-8")));
        let e = file_entry("blob.dat".into(), b"a\0b");
        assert_eq!(
            (e.mime, e.encoding),
            ("application/octet-stream", Some("base64"))
        );
        assert_eq!(e.size, 3);
    }

    #[test]
    fn symlinks_and_the_staged_skill_are_not_collected() {
        let skill = tempfile::tempdir().unwrap();
        std::fs::write(skill.path().join("script.py"), "print(1)").unwrap();
        let ws = super::super::workspace::Workspace::create("demo", skill.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.output_dir().join("link")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            ws.output_dir().join("s.txt"),
        )
        .unwrap();
        std::fs::write(ws.output_dir().join("real.txt"), "r").unwrap();
        std::fs::write(ws.work_dir().join("w.txt"), "ww").unwrap();
        let globs = super::super::checks::output_globs(&[
            "$OUTPUT_DIR/**".into(),
            "**/*.py".into(),
            "work/*".into(),
        ])
        .unwrap();
        let (found, capped) = matching_files(&ws.root, &globs);
        assert_eq!(
            found,
            [
                ("out/real.txt".to_string(), 1),
                ("work/w.txt".to_string(), 2)
            ]
        );
        assert!(!capped);
    }
}
