//! `@path` mentions in the user's message: each names a file or folder of the project,
//! and the message goes to the model with what they name attached after it — a file's
//! text (up to a cap), a folder's listing (gitignore-aware, up to a cap). A mention is
//! `@` at the start of the message or after whitespace, followed by a path up to the next
//! whitespace (`@"a path with spaces"` for the rest); punctuation that ends a sentence
//! is not part of the path unless the path exists with it. `\@` is an `@` as text.
//!
//! A mention is resolved like a tool's path argument (every symlink followed, so what
//! is judged is the real file), then judged by the agent with the session's approval
//! policy ([`Mention::access`]: a file outside the project or a secret file asks), and
//! only then read, without following links, regular files only. Only text the user
//! typed is searched for mentions: the agent never hands piped text here. A mention
//! that names nothing, or a FIFO, socket or device, is an error naming it (the message
//! is not sent), never a silent literal. Every frontend gets this through the agent, so
//! the TUI, the REPL and `-p` behave the same. It knows files; it must not know
//! terminals, the approval policy or the model.

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::images::{Image, ImageIntake};
use crate::nofollow::{self, FileError, FileKind};
use crate::tools::path::ResolvedPath;
use crate::tools::{Access, TypedTool};

mod index;

pub use index::{FileIndex, MatchList, Matched};

/// The most of one file attached, in bytes.
pub const MAX_FILE_BYTES: usize = 64 * 1024;
/// The most attached in all, in bytes.
pub const MAX_TOTAL_BYTES: usize = 256 * 1024;
/// The most entries of one folder listed.
pub const MAX_FOLDER_ENTRIES: usize = 300;

/// Why a message's mentions could not be attached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MentionError {
    /// A mention names nothing.
    #[error("@{mention}: no such file or folder in {project} (write \\@ for an @ as text)")]
    Missing {
        /// The path as written.
        mention: String,
        /// The project directory.
        project: PathBuf,
    },
    /// A mention is an image and the model takes none.
    #[error("@{mention} is an image: {}", crate::images::IMAGES_OFF)]
    ImagesOff {
        /// The path as written.
        mention: String,
    },
    /// A mention could not be read.
    #[error("@{mention}: {reason}")]
    Unreadable {
        /// The path as written.
        mention: String,
        /// Why.
        reason: String,
    },
}

/// What one mention attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// The path as shown to the model (relative to the project when inside it).
    pub path: String,
    /// A file or a folder.
    pub kind: AttachmentKind,
    /// Whether it was cut to fit the caps.
    pub truncated: bool,
}

/// What a mention named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachmentKind {
    /// A file's text.
    File,
    /// A folder's listing.
    Folder,
    /// A file that is not text: named, not attached.
    Binary,
    /// An image (told by its first bytes): sent with the message as an image.
    Image,
}

/// The message with its mentions attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// What is sent to the model.
    pub text: String,
    /// What was attached, in order of first mention.
    pub attachments: Vec<Attachment>,
    /// The images mentioned, in order (the text names each as `image #N`).
    pub images: Vec<Image>,
}

/// The mentions of `text`, as written (without `@`), in order, with their byte spans.
fn find(text: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        // `@` is ASCII, so where it is found is a character boundary.
        if bytes[i] != b'@'
            || (i > 0 && bytes[i - 1] == b'\\')
            || !text[..i]
                .chars()
                .next_back()
                .is_none_or(char::is_whitespace)
        {
            i += 1;
            continue;
        }
        let rest = &text[i + 1..];
        if let Some(quoted) = rest.strip_prefix('"')
            && let Some(end) = quoted.find('"')
        {
            let path = &quoted[..end];
            let span = i..i + 1 + 1 + end + 1;
            if !path.is_empty() {
                out.push((path.to_string(), span.clone()));
            }
            i = span.end;
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        if !word.is_empty() {
            out.push((word.to_string(), i..i + 1 + end));
        }
        i += 1 + end.max(1);
    }
    out
}

/// The mention being typed at byte `cursor` of `text`, for a picker: the byte where its
/// `@` stands and what follows it up to the cursor. `None` when the cursor is not in a
/// mention's unquoted word (inside a word like `me@x`, after `\@`, or past a space).
pub fn typing_at(text: &str, cursor: usize) -> Option<(usize, &str)> {
    let before = text.get(..cursor)?;
    let start = before
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = &before[start..];
    // The word runs from a space (or the start), so `me@x` and `\@x` do not start
    // with `@`.
    let query = word.strip_prefix('@')?;
    (!query.starts_with('"')).then_some((start, query))
}

/// How a picked path is written as a mention: `@path`, or `@"path"` when it holds
/// whitespace.
pub fn written(path: &str) -> String {
    if path.contains(char::is_whitespace) {
        format!("@\"{path}\"")
    } else {
        format!("@{path}")
    }
}

/// Whether `text` has any mention (so callers can skip the work).
pub fn has_mentions(text: &str) -> bool {
    !find(text).is_empty()
}

/// What a mention names, as judged: the path resolved through every symlink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// The mention as written (without `@`).
    pub written: String,
    /// The path it names: what is judged and read.
    pub path: ResolvedPath,
    /// A file or a folder.
    pub kind: MentionKind,
}

/// What a mention names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MentionKind {
    /// A regular file: its text is attached.
    File,
    /// A folder: its listing is attached.
    Folder,
}

impl Mention {
    /// What attaching it reads, for the approval policy: a read inside the project
    /// (rules still ask for a secret file), or a read outside it.
    pub fn access(&self) -> Access {
        self.path.read_access()
    }

    /// The tool whose rules judge it: a file is read like `read_file` reads one, a
    /// folder listed like `list` lists one (so `read(…)` rules cover both).
    pub fn tool(&self) -> &'static str {
        match self.kind {
            MentionKind::File => crate::tools::read_file::ReadFile::NAME,
            MentionKind::Folder => crate::tools::list::List::NAME,
        }
    }
}

/// The mentions of `text`, resolved against `project` (symlinks followed), each real
/// path once, in order of first mention. A mention of nothing, or of a FIFO, socket or
/// device, is an error. Touches the disk: call it off the async threads.
pub fn resolve_all(text: &str, project: &Path) -> Result<Vec<Mention>, MentionError> {
    let mut mentions: Vec<Mention> = Vec::new();
    for (written, _) in find(text) {
        let mention = resolve(&written, project)?;
        if mentions.iter().all(|m| m.path.real != mention.path.real) {
            mentions.push(mention);
        }
    }
    Ok(mentions)
}

/// `text` with what `mentions` name attached after it. The mentions must have been
/// judged: this reads them (no symlink followed, regular files only). Touches the disk.
/// A file whose first bytes are a PNG, JPEG, GIF or WebP image (whatever its name) is
/// taken as an image as `intake` says, and named in the text; an SVG is text.
pub fn attach(
    text: &str,
    mentions: &[Mention],
    intake: ImageIntake,
) -> Result<Expanded, MentionError> {
    let mut attachments: Vec<Attachment> = Vec::new();
    let mut images: Vec<Image> = Vec::new();
    let mut blocks = String::new();
    let mut budget = MAX_TOTAL_BYTES;
    for mention in mentions {
        if mention.kind == MentionKind::File && crate::images::looks_like_image(&mention.path.real)
        {
            let (block, attachment, image) = attach_image(mention, intake, images.len() + 1)?;
            blocks.push_str(&block);
            attachments.push(attachment);
            images.push(image);
            continue;
        }
        let (block, attachment) = attach_one(mention, &mut budget)?;
        blocks.push_str(&block);
        attachments.push(attachment);
    }
    let mut message = unescape(text);
    if !blocks.is_empty() {
        message.push_str("\n\n");
        message.push_str(blocks.trim_end());
    }
    Ok(Expanded {
        text: message,
        attachments,
        images,
    })
}

/// The block naming image `number` of the message, and the image read.
fn attach_image(
    mention: &Mention,
    intake: ImageIntake,
    number: usize,
) -> Result<(String, Attachment, Image), MentionError> {
    let max_bytes = match intake {
        ImageIntake::Accept { max_bytes } => max_bytes,
        ImageIntake::Refuse => {
            return Err(MentionError::ImagesOff {
                mention: mention.written.clone(),
            });
        }
    };
    let image = crate::images::read_file(&mention.path.real, max_bytes).map_err(|e| {
        MentionError::Unreadable {
            mention: mention.written.clone(),
            reason: e.to_string(),
        }
    })?;
    let shown = &mention.path.display;
    let block = format!(
        "<file path=\"{shown}\">\n(image #{number}, {} bytes: sent with this message as an image)\n</file>\n",
        image.bytes.len()
    );
    Ok((
        block,
        Attachment {
            path: shown.to_string(),
            kind: AttachmentKind::Image,
            truncated: false,
        },
        image,
    ))
}

/// Resolves and attaches without asking anyone (tests).
#[cfg(test)]
fn expand(text: &str, project: &Path) -> Result<Expanded, MentionError> {
    attach(
        text,
        &resolve_all(text, project)?,
        ImageIntake::Accept {
            max_bytes: crate::images::DEFAULT_MAX_IMAGE_BYTES,
        },
    )
}

/// `\@` made `@` again.
fn unescape(text: &str) -> String {
    text.replace("\\@", "@")
}

/// What a mention names: the path as written, else without trailing sentence
/// punctuation; symlinks followed to the real path.
fn resolve(written: &str, project: &Path) -> Result<Mention, MentionError> {
    let mut candidate = written;
    loop {
        let path = crate::tools::path::resolve(project, candidate);
        let kind = nofollow::kind_of(&path.real).map_err(|e| MentionError::Unreadable {
            mention: written.to_string(),
            reason: e.to_string(),
        })?;
        let kind = match kind {
            Some(FileKind::Regular) => Some(MentionKind::File),
            Some(FileKind::Directory) => Some(MentionKind::Folder),
            Some(other) => {
                return Err(MentionError::Unreadable {
                    mention: written.to_string(),
                    reason: FileError::NotRegular(other).to_string(),
                });
            }
            None => None,
        };
        if let Some(kind) = kind {
            return Ok(Mention {
                written: candidate.to_string(),
                path,
                kind,
            });
        }
        match candidate.strip_suffix(['.', ',', ';', ':', '!', '?', ')', '\'', '"']) {
            Some(shorter) if !shorter.is_empty() => candidate = shorter,
            _ => {
                return Err(MentionError::Missing {
                    mention: written.to_string(),
                    project: project.to_path_buf(),
                });
            }
        }
    }
}

/// The block for one mention and what it attached.
fn attach_one(mention: &Mention, budget: &mut usize) -> Result<(String, Attachment), MentionError> {
    let unreadable = |reason: String| MentionError::Unreadable {
        mention: mention.written.clone(),
        reason,
    };
    let shown = &mention.path.display;
    let real = &mention.path.real;
    if mention.kind == MentionKind::Folder {
        let (listing, truncated) = folder_listing(real);
        let listing = cut(&listing, *budget);
        *budget = budget.saturating_sub(listing.len());
        let block = format!("<folder path=\"{shown}\">\n{listing}</folder>\n");
        return Ok((
            block,
            Attachment {
                path: shown.to_string(),
                kind: AttachmentKind::Folder,
                truncated,
            },
        ));
    }
    let mut file = nofollow::open_read(real).map_err(|e| unreadable(e.to_string()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let cap = MAX_FILE_BYTES.min(*budget);
    let mut bytes = Vec::with_capacity(cap.min(usize::try_from(size).unwrap_or(cap)));
    file.by_ref()
        .take(u64::try_from(cap).unwrap_or(u64::MAX))
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(e.to_string()))?;
    if bytes.contains(&0) {
        let block = format!(
            "<file path=\"{shown}\">\n(binary file, {size} bytes: not attached)\n</file>\n"
        );
        return Ok((
            block,
            Attachment {
                path: shown.to_string(),
                kind: AttachmentKind::Binary,
                truncated: false,
            },
        ));
    }
    let truncated = u64::try_from(bytes.len()).unwrap_or(u64::MAX) < size;
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if truncated {
        // Cut at a line end so the model sees whole lines, and say what is left.
        if let Some(end) = text.rfind('\n') {
            text.truncate(end + 1);
        }
        let _ = writeln!(
            text,
            "[… cut: {} of {size} bytes attached; read_file reads the rest]",
            text.len()
        );
    } else if !text.ends_with('\n') {
        text.push('\n');
    }
    *budget = budget.saturating_sub(text.len());
    let block = format!("<file path=\"{shown}\">\n{text}</file>\n");
    Ok((
        block,
        Attachment {
            path: shown.to_string(),
            kind: AttachmentKind::File,
            truncated,
        },
    ))
}

/// A folder's files and subfolders (gitignore-aware, depth 3), one per line.
fn folder_listing(dir: &Path) -> (String, bool) {
    let mut out = String::new();
    let mut count = 0;
    let walk = crate::project_walk::project_walker(dir)
        .max_depth(Some(3))
        .sort_by_file_path(|a, b| a.cmp(b))
        .build();
    for entry in walk.flatten().skip(1) {
        if count == MAX_FOLDER_ENTRIES {
            let _ = writeln!(out, "[… more entries not listed]");
            return (out, true);
        }
        let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        let slash = if entry.file_type().is_some_and(|t| t.is_dir()) {
            "/"
        } else {
            ""
        };
        let _ = writeln!(out, "{}{slash}", rel.display());
        count += 1;
    }
    if count == 0 {
        out.push_str("(empty)\n");
    }
    (out, false)
}

fn cut(text: &str, budget: usize) -> String {
    if text.len() <= budget {
        return text.to_string();
    }
    let mut end = budget;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[… cut to fit]\n", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_contains, temp_tree};

    fn project() -> tempfile::TempDir {
        let dir = temp_tree(&[
            ("src/main.rs", "fn main() {}\n"),
            ("src/util/mod.rs", "pub fn x() {}"),
            ("my notes.txt", "spaced\n"),
        ]);
        std::fs::write(dir.path().join("blob.bin"), [0u8, 1, 2]).unwrap();
        dir
    }

    #[test]
    fn the_mention_being_typed_is_found_at_the_cursor() {
        let text = "see @src/ma and me@x \\@no @";
        assert_eq!(typing_at(text, 11), Some((4, "src/ma")));
        assert_eq!(typing_at(text, 5), Some((4, "")));
        // Past the space after it, inside a word, after `\\@`, at a bare `@`.
        assert_eq!(typing_at(text, 12), None);
        assert_eq!(typing_at(text, 20), None);
        assert_eq!(typing_at(text, 25), None);
        assert_eq!(typing_at(text, text.len()), Some((text.len() - 1, "")));
        // Not a character boundary, a quoted mention, out of range.
        assert_eq!(typing_at("@é", 2), None);
        assert_eq!(typing_at("@\"a b", 5), None);
        assert_eq!(typing_at("@a", 9), None);
        assert_eq!(written("src/a.rs"), "@src/a.rs");
        assert_eq!(written("my notes/a.md"), "@\"my notes/a.md\"");
    }

    #[test]
    fn files_and_folders_are_attached_after_the_message() {
        let p = project();
        let e = expand("fix @src/main.rs, see @src/util.", p.path()).unwrap();
        assert!(
            e.text.starts_with("fix @src/main.rs, see @src/util.\n\n"),
            "{}",
            e.text
        );
        assert_contains(
            &e.text,
            "<file path=\"src/main.rs\">\nfn main() {}\n</file>",
        );
        assert_contains(&e.text, "<folder path=\"src/util\">\nmod.rs\n</folder>");
        assert_eq!(e.attachments.len(), 2);
        assert_eq!(e.attachments[1].kind, AttachmentKind::Folder);
    }

    #[test]
    fn quoted_paths_binary_files_and_repeats() {
        let p = project();
        let e = expand("@\"my notes.txt\" and @blob.bin and @blob.bin", p.path()).unwrap();
        assert_contains(&e.text, "<file path=\"my notes.txt\">\nspaced\n</file>");
        assert_contains(&e.text, "(binary file, 3 bytes: not attached)");
        assert_eq!(e.attachments.len(), 2);
    }

    #[test]
    fn text_without_mentions_is_untouched_whatever_its_characters() {
        let p = project();
        for text in [
            "\u{9b}31m @\u{9b}",
            "é@x",
            "\x1b]0;t\x07",
            "@",
            "a @ b",
            "ü @\"\"",
        ] {
            let found = find(text);
            assert!(
                found.iter().all(|(m, _)| !m.is_empty()),
                "{text:?}: {found:?}"
            );
        }
        assert_eq!(
            expand("\u{9b}31m é@x", p.path()).unwrap().text,
            "\u{9b}31m é@x"
        );
    }

    #[test]
    fn a_missing_path_is_an_error_and_emails_and_escapes_are_text() {
        let p = project();
        let err = expand("look at @nope.rs", p.path()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("@nope.rs: no such file or folder in "),
            "{err}"
        );
        let e = expand("mail me@example.com or \\@team", p.path()).unwrap();
        assert_eq!(e.text, "mail me@example.com or @team");
        assert!(e.attachments.is_empty());
        assert!(!has_mentions("me@example.com"));
        assert!(has_mentions("@x"));
    }

    #[test]
    fn big_files_are_cut_at_a_line_and_say_so() {
        let p = project();
        let line = "x".repeat(99) + "\n";
        std::fs::write(p.path().join("big.txt"), line.repeat(2000)).unwrap();
        let e = expand("@big.txt", p.path()).unwrap();
        assert!(e.attachments[0].truncated);
        assert!(e.text.len() < MAX_FILE_BYTES + 500);
        assert!(
            e.text
                .contains("of 200000 bytes attached; read_file reads the rest]"),
            "{}",
            &e.text[e.text.len() - 200..]
        );
    }
}
