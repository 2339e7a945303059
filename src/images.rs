//! Images in the conversation: what an image is (its type told by its first bytes, never
//! by its name), the reference a message keeps of one (`ImageRef`: hash, type, size and
//! a name to show, well under 1 KB), and where the bytes live (`ImageStore`: once per
//! content hash, in a folder beside the saved session, or in memory for a session that
//! is not saved). Before each request the images the conversation refers to are read
//! back into `ImageData` (data URLs by hash) for the wire code; nothing keeps the bytes
//! between requests. It knows files and image formats; it must not know the wire, the
//! session records, the approval policy or terminals.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// The largest image attached by default, in bytes (config.toml's `max_image_bytes`).
pub const DEFAULT_MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

/// The folder, inside a saved session's artifacts folder (`<id>.artifacts/`), that holds
/// its images: one file per image, named by its SHA-256.
pub const FOLDER: &str = "images";

/// Longest name kept in a reference, in bytes.
const MAX_NAME: usize = 120;

/// An image format the models take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageType {
    /// PNG.
    Png,
    /// JPEG.
    Jpeg,
    /// GIF.
    Gif,
    /// WebP.
    Webp,
}

impl ImageType {
    /// The format `bytes` start with, if they are one of these images.
    pub fn sniff(bytes: &[u8]) -> Option<ImageType> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(ImageType::Png)
        } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
            Some(ImageType::Jpeg)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(ImageType::Gif)
        } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
            Some(ImageType::Webp)
        } else {
            None
        }
    }

    /// Its MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            ImageType::Png => "image/png",
            ImageType::Jpeg => "image/jpeg",
            ImageType::Gif => "image/gif",
            ImageType::Webp => "image/webp",
        }
    }
}

/// What a message keeps of an image: enough to find its bytes and to name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRef {
    /// SHA-256 of the bytes, lowercase hex: the stored file's name.
    pub sha256: String,
    /// Its format.
    #[serde(rename = "type")]
    pub kind: ImageType,
    /// Its size in bytes.
    pub size: u64,
    /// What to call it (a file name, `clipboard`), cut to 120 bytes.
    pub name: String,
}

/// Why an image could not be read or stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// Its bytes are no PNG, JPEG, GIF or WebP.
    #[error("not an image (PNG, JPEG, GIF or WebP, told by its first bytes)")]
    NotAnImage,
    /// It is larger than the cap.
    #[error("the image is {size} bytes, over the {max}-byte cap (max_image_bytes)")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The cap.
        max: u64,
    },
    /// The file could not be read.
    #[error("{0}")]
    Unreadable(String),
    /// Base64 text that is not valid standard base64.
    #[error("the image data is not valid base64")]
    BadBase64,
    /// Its bytes are another image type than the one its sender named.
    #[error("the image was said to be {declared}, but its bytes are {actual}")]
    WrongType {
        /// The MIME type the sender named.
        declared: String,
        /// The one its bytes are.
        actual: &'static str,
    },
    /// The store could not be written or read.
    #[error("image store {}: {reason}", dir.display())]
    Store {
        /// The folder.
        dir: PathBuf,
        /// Why.
        reason: String,
    },
}

/// Whether images may be taken into the conversation, and how large.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageIntake {
    /// Images up to `max_bytes` are attached.
    Accept {
        /// The cap.
        max_bytes: u64,
    },
    /// The model takes no images (`images = false`): attaching one is refused.
    Refuse,
}

/// What is said when an image is attached for a model that takes none.
pub const IMAGES_OFF: &str = "this model takes no images (images = false for this provider in config.toml): \
     nothing was sent; use a vision model, or leave the image out";

/// An image read and checked, not stored yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Its format, from its first bytes.
    pub kind: ImageType,
    /// What to call it.
    pub name: String,
}

impl Image {
    /// `bytes` as an image, if they are one and within `max`.
    pub fn from_bytes(bytes: Vec<u8>, name: &str, max: u64) -> Result<Image, ImageError> {
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if size > max {
            return Err(ImageError::TooLarge { size, max });
        }
        let kind = ImageType::sniff(&bytes).ok_or(ImageError::NotAnImage)?;
        Ok(Image {
            bytes,
            kind,
            name: short_name(name),
        })
    }
}

/// Whether the file at `real` starts like an image. Does not follow a symlink at the
/// last component; any failure is "no" (the caller reads it and reports).
pub fn looks_like_image(real: &Path) -> bool {
    let Ok(file) = crate::nofollow::open_read(real) else {
        return false;
    };
    let mut head = Vec::with_capacity(16);
    if file.take(16).read_to_end(&mut head).is_err() {
        return false;
    }
    ImageType::sniff(&head).is_some()
}

/// Reads the image at `real` (a judged, resolved path): a regular file reached without
/// a symlink, at most `max` bytes, an image by its first bytes.
pub fn read_file(real: &Path, max: u64) -> Result<Image, ImageError> {
    let file =
        crate::nofollow::open_read(real).map_err(|e| ImageError::Unreadable(e.to_string()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > max {
        return Err(ImageError::TooLarge { size, max });
    }
    let mut bytes = Vec::new();
    // One byte more than the cap tells a file that grew since.
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ImageError::Unreadable(e.to_string()))?;
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Image::from_bytes(bytes, &name, max)
}

/// An image handed over as base64 text (an editor's prompt, a stream-json line):
/// decoded within `max` (the size is known before anything is decoded), an image by its
/// bytes, and of the MIME type `declared` when one is named.
pub fn from_base64(
    data: &str,
    declared: Option<&str>,
    name: &str,
    max: u64,
) -> Result<Image, ImageError> {
    let bytes = decode_base64(data, max)?;
    let image = Image::from_bytes(bytes, name, max)?;
    if let Some(declared) = declared
        && !declared.trim().eq_ignore_ascii_case(image.kind.mime())
    {
        return Err(ImageError::WrongType {
            declared: short_name(declared),
            actual: image.kind.mime(),
        });
    }
    Ok(image)
}

/// Standard base64 (padding optional, ASCII whitespace ignored) decoded; refused
/// before decoding when it would be more than `max` bytes.
fn decode_base64(text: &str, max: u64) -> Result<Vec<u8>, ImageError> {
    let clean: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let pads = clean.iter().rev().take_while(|&&b| b == b'=').count();
    if pads > 2 || (pads > 0 && !clean.len().is_multiple_of(4)) {
        return Err(ImageError::BadBase64);
    }
    let body = &clean[..clean.len() - pads];
    let tail = match body.len() % 4 {
        0 => 0,
        2 => 1,
        3 => 2,
        _ => return Err(ImageError::BadBase64),
    };
    let size = u64::try_from(body.len() / 4 * 3 + tail).unwrap_or(u64::MAX);
    if size > max {
        return Err(ImageError::TooLarge { size, max });
    }
    let value = |c: u8| -> Result<u32, ImageError> {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(ImageError::BadBase64),
        };
        Ok(u32::from(v))
    };
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + tail);
    for chunk in body.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let [_, a, b, c] = n.to_be_bytes();
        out.push(a);
        if chunk.len() > 2 {
            out.push(b);
        }
        if chunk.len() > 3 {
            out.push(c);
        }
    }
    Ok(out)
}

fn short_name(name: &str) -> String {
    let mut end = name.len().min(MAX_NAME);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].chars().filter(|c| !c.is_control()).collect()
}

/// Where a session's images live, each once by content hash.
#[derive(Debug, Clone)]
pub enum ImageStore {
    /// Files named by hash in this folder (beside the saved session).
    Folder(PathBuf),
    /// In memory, for a session that is not saved.
    Memory(Arc<Mutex<BTreeMap<String, Arc<[u8]>>>>),
}

impl Default for ImageStore {
    fn default() -> Self {
        ImageStore::Memory(Arc::default())
    }
}

impl ImageStore {
    /// Stores `image` (nothing is written when its hash is there already) and returns
    /// the reference a message keeps.
    pub fn put(&self, image: &Image) -> Result<ImageRef, ImageError> {
        let sha256 = hex(&Sha256::digest(&image.bytes));
        match self {
            ImageStore::Folder(dir) => write_once(dir, &sha256, &image.bytes)?,
            ImageStore::Memory(map) => {
                let mut map = map
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                map.entry(sha256.clone())
                    .or_insert_with(|| Arc::from(image.bytes.as_slice()));
            }
        }
        Ok(ImageRef {
            sha256,
            kind: image.kind,
            size: u64::try_from(image.bytes.len()).unwrap_or(u64::MAX),
            name: image.name.clone(),
        })
    }

    /// The bytes of `image`, checked against its hash.
    pub fn get(&self, image: &ImageRef) -> Result<Vec<u8>, ImageError> {
        let bytes = match self {
            ImageStore::Folder(dir) => {
                if !is_hex_digest(&image.sha256) {
                    return Err(store_error(dir, "a reference with a malformed hash"));
                }
                let path = dir.join(&image.sha256);
                let file = crate::nofollow::open_read(&path)
                    .map_err(|e| store_error(dir, &format!("{}: {e}", image.sha256)))?;
                let mut bytes = Vec::new();
                file.take(image.size.saturating_add(1))
                    .read_to_end(&mut bytes)
                    .map_err(|e| store_error(dir, &e.to_string()))?;
                bytes
            }
            ImageStore::Memory(map) => map
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(&image.sha256)
                .map(|b| b.to_vec())
                .ok_or_else(|| store_error(Path::new("(memory)"), "no such image"))?,
        };
        if hex(&Sha256::digest(&bytes)) != image.sha256 {
            return Err(ImageError::Store {
                dir: self.folder().unwrap_or(Path::new("(memory)")).to_path_buf(),
                reason: format!("{} does not hold what it was stored with", image.sha256),
            });
        }
        Ok(bytes)
    }

    /// The folder, when the images are on disk.
    pub fn folder(&self) -> Option<&Path> {
        match self {
            ImageStore::Folder(dir) => Some(dir),
            ImageStore::Memory(_) => None,
        }
    }

    /// The images `refs` name, read back as data URLs for one request. One that cannot
    /// be read is left out (the wire says so in its place).
    pub fn load<'a>(&self, refs: impl IntoIterator<Item = &'a ImageRef>) -> ImageData {
        let mut data = ImageData::default();
        for image in refs {
            if data.urls.contains_key(&image.sha256) {
                continue;
            }
            if let Ok(bytes) = self.get(image) {
                data.urls
                    .insert(image.sha256.clone(), data_url(image.kind, &bytes));
            }
        }
        data
    }
}

/// The images of one request, as data URLs by hash.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageData {
    urls: BTreeMap<String, String>,
}

/// No images.
pub static NO_IMAGES: ImageData = ImageData {
    urls: BTreeMap::new(),
};

impl ImageData {
    /// The data URL of `image`, if it was read.
    pub fn url(&self, image: &ImageRef) -> Option<&str> {
        self.urls.get(&image.sha256).map(String::as_str)
    }

    /// Whether nothing was read.
    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }
}

/// `data:<mime>;base64,<bytes>`.
pub fn data_url(kind: ImageType, bytes: &[u8]) -> String {
    let mut url = String::with_capacity(bytes.len() * 4 / 3 + 32);
    url.push_str("data:");
    url.push_str(kind.mime());
    url.push_str(";base64,");
    base64_into(bytes, &mut url);
    url
}

/// Standard base64 with padding, appended to `out`.
fn base64_into(bytes: &[u8], out: &mut String) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextet = |shift: u32| char::from(ALPHABET[((n >> shift) & 63) as usize]);
        out.push(sextet(18));
        out.push(sextet(12));
        out.push(if chunk.len() > 1 { sextet(6) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(0) } else { '=' });
    }
}

fn hex(digest: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(digest.len() * 2);
    for b in digest {
        let _ = write!(out, "{b:02x}");
    }
    out
}

fn is_hex_digest(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn store_error(dir: &Path, reason: &str) -> ImageError {
    ImageError::Store {
        dir: dir.to_path_buf(),
        reason: reason.to_string(),
    }
}

/// Writes `bytes` as `dir/name` unless a file of that name is there: through a private
/// temporary file and a rename, so a reader never sees half an image.
fn write_once(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), ImageError> {
    let fail = |e: std::io::Error| store_error(dir, &e.to_string());
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(fail)?;
    let path = dir.join(name);
    if std::fs::symlink_metadata(&path).is_ok() {
        return Ok(());
    }
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&temp)
        .map_err(fail)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(fail(e));
    }
    std::fs::rename(&temp, &path).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest PNG header bytes and a little more.
    pub(crate) const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDRpixels";

    #[test]
    fn the_type_is_told_by_the_first_bytes() {
        assert_eq!(ImageType::sniff(PNG), Some(ImageType::Png));
        assert_eq!(
            ImageType::sniff(b"\xff\xd8\xff\xe0.."),
            Some(ImageType::Jpeg)
        );
        assert_eq!(ImageType::sniff(b"GIF89a..."), Some(ImageType::Gif));
        assert_eq!(
            ImageType::sniff(b"RIFF\0\0\0\0WEBPVP8 "),
            Some(ImageType::Webp)
        );
        assert_eq!(ImageType::sniff(b"<svg xmlns=..."), None);
        assert_eq!(ImageType::sniff(b"RIFF\0\0\0\0WAVE"), None);
        assert_eq!(
            Image::from_bytes(b"text".to_vec(), "a.png", 100),
            Err(ImageError::NotAnImage)
        );
        assert_eq!(
            Image::from_bytes(PNG.to_vec(), "a.png", 4),
            Err(ImageError::TooLarge {
                size: PNG.len() as u64,
                max: 4
            })
        );
    }

    #[test]
    fn base64_decodes_what_it_encodes_and_refuses_the_rest() {
        for text in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
            let mut encoded = String::new();
            base64_into(text.as_bytes(), &mut encoded);
            assert_eq!(decode_base64(&encoded, 100).unwrap(), text.as_bytes());
            let unpadded = encoded.trim_end_matches('=');
            assert_eq!(decode_base64(unpadded, 100).unwrap(), text.as_bytes());
        }
        assert_eq!(decode_base64("Zm9v\nYmFy\n", 100).unwrap(), b"foobar");
        for bad in ["Zm9v!", "Z", "Zm9===", "Zm=9", "Zg=", "€€€€"] {
            assert_eq!(decode_base64(bad, 100), Err(ImageError::BadBase64), "{bad}");
        }
        // The cap is judged before decoding.
        assert_eq!(
            decode_base64(&"A".repeat(4000), 10),
            Err(ImageError::TooLarge {
                size: 3000,
                max: 10
            })
        );
        let mut png = String::new();
        base64_into(b"\x89PNG\r\n\x1a\n rest", &mut png);
        assert_eq!(
            from_base64(&png, Some("image/png"), "a", 100).unwrap().kind,
            ImageType::Png
        );
        assert_eq!(
            from_base64(&png, None, "a", 100).unwrap().kind,
            ImageType::Png
        );
        assert_eq!(
            from_base64(&png, Some("image/jpeg"), "a", 100),
            Err(ImageError::WrongType {
                declared: "image/jpeg".into(),
                actual: "image/png"
            })
        );
        let mut text = String::new();
        base64_into(b"plain text", &mut text);
        assert_eq!(
            from_base64(&text, None, "a", 100),
            Err(ImageError::NotAnImage)
        );
    }

    #[test]
    fn base64_matches_the_standard_vectors() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            let mut out = String::new();
            base64_into(input.as_bytes(), &mut out);
            assert_eq!(out, want);
        }
        assert_eq!(
            data_url(ImageType::Gif, b"foo"),
            "data:image/gif;base64,Zm9v"
        );
    }

    #[test]
    fn a_folder_store_keeps_each_image_once_and_checks_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = ImageStore::Folder(dir.path().join("images"));
        let image = Image::from_bytes(PNG.to_vec(), "shot.png", 1000).unwrap();
        let first = store.put(&image).unwrap();
        let second = store.put(&image).unwrap();
        assert_eq!(first, second);
        let files: Vec<_> = std::fs::read_dir(dir.path().join("images"))
            .unwrap()
            .collect();
        assert_eq!(files.len(), 1);
        assert_eq!(store.get(&first).unwrap(), PNG);
        assert!(serde_json::to_string(&first).unwrap().len() < 200);
        let data = store.load([&first, &second]);
        assert!(
            data.url(&first)
                .unwrap()
                .starts_with("data:image/png;base64,")
        );
        // A changed file is not sent, and a hash naming another file is refused.
        std::fs::write(dir.path().join("images").join(&first.sha256), b"other").unwrap();
        assert!(store.load([&first]).is_empty());
        let escape = ImageRef {
            sha256: "../../etc/passwd".into(),
            ..first
        };
        assert!(store.get(&escape).is_err());
    }

    #[test]
    fn a_memory_store_for_an_unsaved_session() {
        let store = ImageStore::default();
        let image = Image::from_bytes(PNG.to_vec(), "a\u{1b}[31m.png", 1000).unwrap();
        assert_eq!(image.name, "a[31m.png");
        let r = store.put(&image).unwrap();
        assert_eq!(store.get(&r).unwrap(), PNG);
    }
}
