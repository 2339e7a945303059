//! Images into the draft: a paste whose whole text is the path of an image file (quoted
//! or not, `file://` too, a terminal's `\ `-escaped spaces undone), told an image by its
//! bytes, and Ctrl+V's clipboard image, read through `wl-paste` or `xclip` run without
//! a shell, capped at 2 s and at the image size limit. Each becomes the bytes of an
//! [`ImageInput`] for the composer's chip; the agent checks them again when sent.
//!
//! It knows paths, image files and the clipboard tools; it must not know the composer,
//! keys or the screen.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt as _;

use crate::images::{Image, ImageError};
use crate::protocol::ImageInput;

/// The longest a clipboard tool may take.
pub const CLIPBOARD_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest paste looked at as a path, in bytes.
const MAX_PATH_PASTE: usize = 4096;

/// What a paste turned out to be.
#[derive(Debug)]
pub enum PastedPath {
    /// Not the path of an image file: the paste is text.
    NotAnImage,
    /// The path of an image file that could not be taken (too large, unreadable).
    Refused {
        /// Why, for a note.
        reason: String,
    },
    /// An image file, read.
    Image {
        /// Its bytes and name.
        image: ImageInput,
    },
}

/// `text` as the path of an image file, relative to `workdir` (`~/` from `home`),
/// read when it is one within `max_bytes`.
pub fn pasted_image(text: &str, workdir: &Path, home: Option<&Path>, max_bytes: u64) -> PastedPath {
    let Some(path) = path_of(text, workdir, home) else {
        return PastedPath::NotAnImage;
    };
    // The user pasted this path themselves: links are followed to the real file, which
    // is then read without following any (a FIFO or a device is refused unopened).
    let Ok(real) = std::fs::canonicalize(&path) else {
        return PastedPath::NotAnImage;
    };
    if !real.is_file() {
        return PastedPath::NotAnImage;
    }
    match crate::images::read_file(&real, max_bytes) {
        Ok(Image { bytes, name, .. }) => PastedPath::Image {
            image: ImageInput::Bytes { bytes, name },
        },
        Err(ImageError::NotAnImage) => PastedPath::NotAnImage,
        Err(e) => PastedPath::Refused {
            reason: format!("{}: {e}", path.display()),
        },
    }
}

/// The one path `text` names, if it is nothing but a path.
fn path_of(text: &str, workdir: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let text = text.trim();
    if text.is_empty() || text.len() > MAX_PATH_PASTE || text.contains(['\n', '\r', '\0']) {
        return None;
    }
    let unquoted = match text.as_bytes() {
        [b'\'', .., b'\''] | [b'"', .., b'"'] if text.len() >= 2 => {
            text[1..text.len() - 1].to_string()
        }
        _ => text.replace("\\ ", " "),
    };
    let plain = match unquoted.strip_prefix("file://") {
        // `file:///abs` or `file://localhost/abs`.
        Some(rest) => {
            let rest = rest.strip_prefix("localhost").unwrap_or(rest);
            if !rest.starts_with('/') {
                return None;
            }
            percent_decode(rest)?
        }
        None => unquoted,
    };
    if plain.is_empty() {
        return None;
    }
    let path = match (plain.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(plain),
    };
    Some(workdir.join(path))
}

/// `%XX` escapes undone; `None` when one is malformed or the result is no UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A program that prints the clipboard's image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClipboardTool {
    /// The program, looked up on `PATH`.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// The tools tried for this session, in order: `wl-paste` under Wayland, `xclip` under
/// X11 (both when both are set).
pub fn system_tools() -> Vec<ClipboardTool> {
    let mut tools = Vec::new();
    if std::env::var_os("WAYLAND_DISPLAY").is_some() {
        tools.push(ClipboardTool {
            program: "wl-paste".into(),
            args: vec!["--no-newline".into(), "--type".into(), "image/png".into()],
        });
    }
    if std::env::var_os("DISPLAY").is_some() {
        tools.push(ClipboardTool {
            program: "xclip".into(),
            args: ["-selection", "clipboard", "-t", "image/png", "-o"]
                .map(String::from)
                .to_vec(),
        });
    }
    tools
}

/// What Ctrl+V found on the clipboard.
#[derive(Debug)]
pub enum Clipboard {
    /// An image.
    Image {
        /// Its bytes, named `clipboard`.
        image: ImageInput,
    },
    /// No tool to read the clipboard's image with is installed (or no display is set).
    NoTool,
    /// The tools ran, but no image came (none on the clipboard, too large, too slow).
    NoImage {
        /// Why, for a note.
        reason: String,
    },
}

/// Reads the clipboard's image with the first of `tools` that is installed, within
/// [`CLIPBOARD_TIMEOUT`] and `max_bytes`.
pub async fn read_clipboard(tools: &[ClipboardTool], max_bytes: u64) -> Clipboard {
    let mut reason = None;
    for tool in tools {
        match run_tool(tool, max_bytes).await {
            ToolRun::Missing => continue,
            ToolRun::Failed { why } => reason = Some(format!("{}: {why}", tool.program)),
            ToolRun::Printed { bytes } => {
                return match Image::from_bytes(bytes, "clipboard", max_bytes) {
                    Ok(image) => Clipboard::Image {
                        image: ImageInput::Bytes {
                            bytes: image.bytes,
                            name: image.name,
                        },
                    },
                    Err(e) => Clipboard::NoImage {
                        reason: format!("{}: {e}", tool.program),
                    },
                };
            }
        }
    }
    match reason {
        Some(reason) => Clipboard::NoImage { reason },
        None => Clipboard::NoTool,
    }
}

/// How one tool's run went.
enum ToolRun {
    /// It is not installed.
    Missing,
    /// It ran and printed nothing usable.
    Failed { why: String },
    /// What it printed (at most one byte over the cap).
    Printed { bytes: Vec<u8> },
}

async fn run_tool(tool: &ClipboardTool, max_bytes: u64) -> ToolRun {
    let spawned = tokio::process::Command::new(&tool.program)
        .args(&tool.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return ToolRun::Missing,
        Err(e) => return ToolRun::Failed { why: e.to_string() },
    };
    let Some(stdout) = child.stdout.take() else {
        return ToolRun::Failed {
            why: "no output".into(),
        };
    };
    let read = async {
        let mut bytes = Vec::new();
        // One byte more than the cap tells an image that is too large.
        let got = stdout
            .take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .await;
        let status = if bytes.len() as u64 > max_bytes {
            // Too large: it need not finish.
            None
        } else {
            child.wait().await.ok()
        };
        (got, bytes, status)
    };
    let outcome = tokio::time::timeout(CLIPBOARD_TIMEOUT, read).await;
    // Dropping the child (kill_on_drop) stops a tool still running.
    match outcome {
        Err(_) => ToolRun::Failed {
            why: format!("no answer within {} s", CLIPBOARD_TIMEOUT.as_secs()),
        },
        Ok((Err(e), _, _)) => ToolRun::Failed { why: e.to_string() },
        Ok((Ok(_), _, Some(status))) if !status.success() => ToolRun::Failed {
            why: "no image on the clipboard".into(),
        },
        Ok((Ok(_), bytes, _)) if bytes.is_empty() => ToolRun::Failed {
            why: "no image on the clipboard".into(),
        },
        Ok((Ok(_), bytes, _)) => ToolRun::Printed { bytes },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn bytes_of(p: PastedPath) -> Option<Vec<u8>> {
        match p {
            PastedPath::Image {
                image: ImageInput::Bytes { bytes, .. },
            } => Some(bytes),
            _ => None,
        }
    }

    #[test]
    fn a_pasted_path_in_any_spelling_is_an_image_by_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let shot = dir.path().join("my shot.png");
        std::fs::write(&shot, PNG).unwrap();
        std::fs::write(dir.path().join("fake.png"), b"not an image").unwrap();
        std::fs::write(dir.path().join("real.txt"), PNG).unwrap();
        std::os::unix::fs::symlink(&shot, dir.path().join("link.png")).unwrap();
        let abs = shot.display().to_string();
        let home = dir.path();
        for text in [
            abs.clone(),
            format!("'{abs}'"),
            format!("\"{abs}\"\n"),
            format!("  {}  ", abs.replace(' ', "\\ ")),
            format!("file://{}", abs.replace(' ', "%20")),
            format!("file://localhost{}", abs.replace(' ', "%20")),
            "my shot.png".to_string(),
            "~/my shot.png".to_string(),
            "link.png".to_string(),
            // Named .txt, but a PNG by its bytes.
            "real.txt".to_string(),
        ] {
            let got = pasted_image(&text, dir.path(), Some(home), 1 << 20);
            assert_eq!(bytes_of(got).as_deref(), Some(PNG), "{text:?}");
        }
        for text in [
            "fake.png",
            "missing.png",
            "",
            ".",
            "file://relative.png",
            "file:///%zz",
            &format!("{abs}\n{abs}"),
            &format!("look at {abs}"),
        ] {
            let got = pasted_image(text, dir.path(), Some(home), 1 << 20);
            assert!(matches!(got, PastedPath::NotAnImage), "{text:?}: {got:?}");
        }
        let got = pasted_image(&abs, dir.path(), Some(home), 4);
        assert!(
            matches!(&got, PastedPath::Refused { reason } if reason.contains("cap")),
            "{got:?}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.png");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // Opening it would block this test forever.
        let got = pasted_image("pipe.png", dir.path(), None, 1 << 20);
        assert!(matches!(got, PastedPath::NotAnImage), "{got:?}");
    }

    fn script(dir: &Path, name: &str, body: &str) -> ClipboardTool {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        ClipboardTool {
            program: path.display().to_string(),
            args: vec![],
        }
    }

    #[tokio::test]
    async fn the_clipboard_image_comes_from_the_first_tool_installed() {
        let dir = tempfile::tempdir().unwrap();
        let missing = ClipboardTool {
            program: dir.path().join("absent").display().to_string(),
            args: vec![],
        };
        let png = dir.path().join("c.png");
        std::fs::write(&png, PNG).unwrap();
        let prints = script(dir.path(), "prints", &format!("cat '{}'", png.display()));
        match read_clipboard(&[missing.clone(), prints], 1 << 20).await {
            Clipboard::Image {
                image: ImageInput::Bytes { bytes, name },
            } => {
                assert_eq!(bytes, PNG);
                assert_eq!(name, "clipboard");
            }
            other => panic!("{other:?}"),
        }
        // None installed: a quiet answer, no error.
        assert!(matches!(
            read_clipboard(std::slice::from_ref(&missing), 1 << 20).await,
            Clipboard::NoTool
        ));
        assert!(matches!(
            read_clipboard(&[], 1 << 20).await,
            Clipboard::NoTool
        ));
        // Text on the clipboard, a tool that fails, output over the cap.
        let text = script(dir.path(), "text", "echo hello");
        let fails = script(dir.path(), "fails", "exit 1");
        let huge = script(dir.path(), "huge", "head -c 100000 /dev/zero");
        for (tool, says) in [
            (text, "not an image"),
            (fails, "no image on the clipboard"),
            (huge, "cap"),
        ] {
            match read_clipboard(&[tool], 1000).await {
                Clipboard::NoImage { reason } => assert!(reason.contains(says), "{reason}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn a_clipboard_tool_that_hangs_is_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let hangs = script(dir.path(), "hangs", "exec sleep 30");
        match read_clipboard(&[hangs], 1000).await {
            Clipboard::NoImage { reason } => assert!(reason.contains("no answer"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }
}
