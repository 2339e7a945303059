//! Unpacking a downloaded skills archive (.zip, .tar.gz/.tgz or .tar) into a fresh folder.
//!
//! It recognises the format from the bytes themselves (not the URL), writes only regular
//! files and directories, and only below the destination: absolute names, `..`
//! components, links (symbolic or hard) and special files are skipped with a warning, so
//! nothing can land outside the folder. It enforces the entry-count and extracted-size
//! limits while writing (it never trusts sizes declared in headers). It knows nothing of
//! HTTP, URLs or the cache layout.

use std::fs::{self, File};
use std::io::{self, Cursor, Read, Write};
use std::path::{Path, PathBuf};

use super::RemoteLimits;

/// At most this many skipped-entry warnings are listed; the rest are counted.
const MAX_LISTED_SKIPS: usize = 20;

/// What an archive turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Zip,
    TarGz,
    Tar,
}

impl Format {
    /// Recognises an archive by its first bytes, `None` when it is none of ours.
    pub(super) fn sniff(bytes: &[u8]) -> Option<Format> {
        if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
            Some(Format::Zip)
        } else if bytes.starts_with(&[0x1f, 0x8b]) {
            Some(Format::TarGz)
        } else if bytes.len() >= 512 && looks_like_tar_header(&bytes[..512]) {
            Some(Format::Tar)
        } else {
            None
        }
    }
}

/// True when `block` is a tar header: the `ustar` magic, or a valid header checksum (old
/// v7 archives have no magic).
fn looks_like_tar_header(block: &[u8]) -> bool {
    if block.get(257..262) == Some(b"ustar".as_slice()) {
        return true;
    }
    let Some(field) = block.get(148..156) else {
        return false;
    };
    let digits: String = field
        .iter()
        .map(|&b| b as char)
        .filter(|c| c.is_ascii_digit())
        .collect();
    let Ok(stored) = u32::from_str_radix(&digits, 8) else {
        return false;
    };
    let sum: u32 = block
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u32::from(b)
            }
        })
        .sum();
    // An all-zero block sums to 256 (the spaces) and is an end marker, not a header.
    stored == sum && block.iter().any(|&b| b != 0)
}

/// What was written.
#[derive(Debug, Default)]
pub(super) struct Extracted {
    /// One line per skipped entry (at most [`MAX_LISTED_SKIPS`], then a count).
    pub warnings: Vec<String>,
    /// Regular files written.
    pub files: usize,
    /// Bytes written.
    pub bytes: u64,
}

/// Why an archive could not be unpacked.
#[derive(Debug, thiserror::Error)]
pub(super) enum ExtractError {
    /// The bytes are not a zip, gzip or tar archive.
    #[error("{detail}")]
    NotAnArchive { detail: String },
    /// The archive is damaged or not what its first bytes claim.
    #[error("{reason}")]
    Damaged { reason: String },
    /// More entries than allowed.
    #[error("more than {limit} entries")]
    TooManyEntries { limit: usize },
    /// The files add up to more than allowed.
    #[error("more than {limit} bytes unpacked")]
    TooLarge { limit: u64 },
    /// Writing below the destination failed.
    #[error("cannot write {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

/// Unpacks `bytes` into `dest` (which must exist and be empty).
pub(super) fn extract(
    bytes: &[u8],
    dest: &Path,
    limits: &RemoteLimits,
) -> Result<Extracted, ExtractError> {
    let mut sink = Sink {
        dest,
        limits,
        out: Extracted::default(),
        skipped: 0,
        entries: 0,
    };
    match Format::sniff(bytes) {
        Some(Format::Zip) => unzip(bytes, &mut sink)?,
        Some(Format::TarGz) => untar_gz(bytes, &mut sink)?,
        Some(Format::Tar) => untar(bytes, &mut sink)?,
        None => {
            return Err(ExtractError::NotAnArchive {
                detail: format!("the body starts with {}", preview(bytes)),
            });
        }
    }
    if sink.skipped > MAX_LISTED_SKIPS {
        let more = sink.skipped - MAX_LISTED_SKIPS;
        sink.out
            .warnings
            .push(format!("... and {more} more archive entries skipped"));
    }
    Ok(sink.out)
}

/// The first bytes of a body, printable, for an error message.
fn preview(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "nothing (it is empty)".to_string();
    }
    let head = &bytes[..bytes.len().min(32)];
    let text: String = String::from_utf8_lossy(head)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    format!("{:?}", text.trim_end())
}

/// Why an entry is not written.
enum Refusal {
    Absolute,
    Escapes,
    Link,
    Special,
    BadName(String),
}

impl Refusal {
    fn reason(&self) -> String {
        match self {
            Refusal::Absolute => "an absolute path would land outside the cache folder".into(),
            Refusal::Escapes => "a `..` component would land outside the cache folder".into(),
            Refusal::Link => "links are not unpacked".into(),
            Refusal::Special => "only regular files and directories are unpacked".into(),
            Refusal::BadName(why) => format!("unusable name: {why}"),
        }
    }
}

/// The path below the destination an entry named `name` goes to; `Ok(None)` for the
/// archive's own root (`./`).
fn safe_relative(name: &str) -> Result<Option<PathBuf>, Refusal> {
    if name.contains('\0') {
        return Err(Refusal::BadName("it holds a NUL byte".into()));
    }
    if name.starts_with('/') || name.starts_with('\\') {
        return Err(Refusal::Absolute);
    }
    let mut rel = PathBuf::new();
    for (i, part) in name.split(['/', '\\']).enumerate() {
        match part {
            "" | "." => {}
            ".." => return Err(Refusal::Escapes),
            // `C:` and the like: a drive-relative Windows path.
            p if i == 0 && p.contains(':') => return Err(Refusal::Absolute),
            p => rel.push(p),
        }
    }
    Ok((!rel.as_os_str().is_empty()).then_some(rel))
}

/// Writes entries below the destination, keeping count against the limits.
struct Sink<'a> {
    dest: &'a Path,
    limits: &'a RemoteLimits,
    out: Extracted,
    skipped: usize,
    entries: usize,
}

impl Sink<'_> {
    fn count_entry(&mut self) -> Result<(), ExtractError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(ExtractError::TooManyEntries {
                limit: self.limits.max_entries,
            });
        }
        Ok(())
    }

    fn skip(&mut self, name: &str, why: &Refusal) {
        self.skipped += 1;
        if self.skipped <= MAX_LISTED_SKIPS {
            self.out.warnings.push(format!(
                "skipped archive entry `{}`: {}",
                name.escape_debug(),
                why.reason()
            ));
        }
    }

    /// The destination of `name`, or `None` (skipped with a warning, or the root itself).
    fn target(&mut self, name: &str) -> Option<PathBuf> {
        match safe_relative(name) {
            Ok(rel) => rel.map(|r| self.dest.join(r)),
            Err(why) => {
                self.skip(name, &why);
                None
            }
        }
    }

    fn dir(&mut self, name: &str) -> Result<(), ExtractError> {
        if let Some(path) = self.target(name) {
            fs::create_dir_all(&path).map_err(|source| ExtractError::Io { path, source })?;
        }
        Ok(())
    }

    /// Copies `reader` to the file for `name`, counting bytes against the limit.
    fn file(
        &mut self,
        name: &str,
        reader: &mut dyn Read,
        executable: bool,
    ) -> Result<(), ExtractError> {
        let Some(path) = self.target(name) else {
            return Ok(());
        };
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ExtractError::Io { path, source }
        };
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io_err(parent))?;
        }
        let mut file = File::create(&path).map_err(io_err(&path))?;
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(ExtractError::Damaged {
                        reason: format!("cannot read entry `{}`: {e}", name.escape_debug()),
                    });
                }
            };
            self.out.bytes += n as u64;
            if self.out.bytes > self.limits.max_extracted_bytes {
                return Err(ExtractError::TooLarge {
                    limit: self.limits.max_extracted_bytes,
                });
            }
            file.write_all(&buf[..n]).map_err(io_err(&path))?;
        }
        #[cfg(unix)]
        if executable {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).map_err(io_err(&path))?;
        }
        #[cfg(not(unix))]
        let _ = executable;
        self.out.files += 1;
        Ok(())
    }
}

/// True when a Unix mode has any execute bit.
fn is_executable(mode: Option<u32>) -> bool {
    mode.is_some_and(|m| m & 0o111 != 0)
}

fn unzip(bytes: &[u8], sink: &mut Sink<'_>) -> Result<(), ExtractError> {
    let damaged = |e: zip::result::ZipError| ExtractError::Damaged {
        reason: format!("not a readable zip: {e}"),
    };
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(damaged)?;
    if archive.len() > sink.limits.max_entries {
        return Err(ExtractError::TooManyEntries {
            limit: sink.limits.max_entries,
        });
    }
    for i in 0..archive.len() {
        sink.count_entry()?;
        let mut entry = archive.by_index(i).map_err(damaged)?;
        let name = match entry.name() {
            Ok(n) => n.into_owned(),
            Err(e) => {
                let raw = String::from_utf8_lossy(entry.name_raw()).into_owned();
                sink.skip(&raw, &Refusal::BadName(e.to_string()));
                continue;
            }
        };
        if entry.is_symlink() {
            sink.skip(&name, &Refusal::Link);
        } else if entry.is_dir() {
            sink.dir(&name)?;
        } else {
            let executable = is_executable(entry.unix_mode());
            sink.file(&name, &mut entry, executable)?;
        }
    }
    Ok(())
}

/// A gzip must hold a tar: its first decompressed block is checked before unpacking.
fn untar_gz(bytes: &[u8], sink: &mut Sink<'_>) -> Result<(), ExtractError> {
    let mut decoder = flate2::read::GzDecoder::new(bytes);
    let mut first = Vec::with_capacity(512);
    (&mut decoder)
        .take(512)
        .read_to_end(&mut first)
        .map_err(|e| ExtractError::Damaged {
            reason: format!("not a readable gzip: {e}"),
        })?;
    let empty_tar = first.len() == 512 && first.iter().all(|&b| b == 0);
    if first.len() < 512 || !(empty_tar || looks_like_tar_header(&first)) {
        return Err(ExtractError::NotAnArchive {
            detail: format!(
                "a gzip file that does not hold a tar archive (it starts with {})",
                preview(&first)
            ),
        });
    }
    untar(Cursor::new(first).chain(decoder), sink)
}

fn untar<R: Read>(reader: R, sink: &mut Sink<'_>) -> Result<(), ExtractError> {
    let damaged = |e: io::Error| ExtractError::Damaged {
        reason: format!("not a readable tar: {e}"),
    };
    let mut archive = tar::Archive::new(reader);
    for entry in archive.entries().map_err(damaged)? {
        let mut entry = entry.map_err(damaged)?;
        sink.count_entry()?;
        let name = match std::str::from_utf8(&entry.path_bytes()) {
            Ok(n) => n.to_string(),
            Err(_) => {
                let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
                sink.skip(&raw, &Refusal::BadName("it is not UTF-8".into()));
                continue;
            }
        };
        let kind = entry.header().entry_type();
        if kind.is_file() || kind.is_contiguous() {
            let executable = is_executable(entry.header().mode().ok());
            sink.file(&name, &mut entry, executable)?;
        } else if kind.is_dir() {
            sink.dir(&name)?;
        } else if kind.is_symlink() || kind.is_hard_link() {
            sink.skip(&name, &Refusal::Link);
        } else if kind.is_pax_global_extensions()
            || kind.is_pax_local_extensions()
            || kind.is_gnu_longname()
            || kind.is_gnu_longlink()
        {
            // Metadata for other entries, not files.
        } else {
            sink.skip(&name, &Refusal::Special);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_relative_keeps_plain_paths_and_refuses_escapes() {
        let ok = |n: &str| safe_relative(n).ok().flatten();
        assert_eq!(ok("a/b/SKILL.md"), Some(PathBuf::from("a/b/SKILL.md")));
        assert_eq!(ok("./a//b/"), Some(PathBuf::from("a/b")));
        assert_eq!(ok("a\\b.md"), Some(PathBuf::from("a/b.md")));
        assert!(matches!(safe_relative("./"), Ok(None)));
        assert!(matches!(safe_relative("../x"), Err(Refusal::Escapes)));
        assert!(matches!(safe_relative("a/../../x"), Err(Refusal::Escapes)));
        assert!(matches!(safe_relative("a\\..\\x"), Err(Refusal::Escapes)));
        assert!(matches!(safe_relative("/etc/x"), Err(Refusal::Absolute)));
        assert!(matches!(safe_relative("\\x"), Err(Refusal::Absolute)));
        assert!(matches!(safe_relative("C:/x"), Err(Refusal::Absolute)));
        assert!(matches!(safe_relative("a\0b"), Err(Refusal::BadName(_))));
    }

    #[test]
    fn sniff_recognises_formats_by_content() {
        assert_eq!(Format::sniff(b"PK\x03\x04rest"), Some(Format::Zip));
        assert_eq!(Format::sniff(&[0x1f, 0x8b, 8, 0]), Some(Format::TarGz));
        assert_eq!(Format::sniff(b"<!DOCTYPE html>"), None);
        assert_eq!(Format::sniff(&[0u8; 1024]), None);
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_old();
        header.set_path("a.txt").unwrap();
        header.set_size(1);
        header.set_cksum();
        builder.append(&header, &b"x"[..]).unwrap();
        let old = builder.into_inner().unwrap();
        assert_eq!(Format::sniff(&old), Some(Format::Tar), "v7 tar, no magic");
    }

    #[test]
    fn not_an_archive_shows_the_start_of_the_body() {
        let dir = tempfile::tempdir().unwrap();
        let err = extract(b"<html>\nnope", dir.path(), &RemoteLimits::default()).unwrap_err();
        assert_eq!(err.to_string(), r#"the body starts with "<html> nope""#);
        let err = extract(b"", dir.path(), &RemoteLimits::default()).unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
    }
}
