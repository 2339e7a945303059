//! Opening a file that must be a plain file, without blocking: the open uses
//! `O_NONBLOCK` (so a FIFO planted where a file is expected cannot hang the open) and the
//! opened descriptor must be a regular file, or the open fails with a message naming
//! what it is. Symlinks are followed (skill folders and configuration may be links);
//! code that acts on judged paths uses `nofollow` instead.
//!
//! It knows files only; it must not know who reads them.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Opens `path` for reading if it is a regular file.
pub fn open(path: &Path) -> io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc_nonblock())
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    let what = if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a plain file"
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{} is {what}, not a plain file", path.display()),
    ))
}

/// Reads all of the regular file `path`.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Reads all of the regular file `path` as UTF-8 text.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// `O_NONBLOCK` (only the open is non-blocking in effect: reads of a regular file never
/// block on it).
fn libc_nonblock() -> i32 {
    nix::fcntl::OFlag::O_NONBLOCK.bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_or_a_folder_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("SKILL.md");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = read(&fifo).unwrap_err().to_string();
        assert!(e.contains("a FIFO"), "{e}");
        assert!(
            read(dir.path())
                .unwrap_err()
                .to_string()
                .contains("a folder")
        );
        let file = dir.path().join("a");
        std::fs::write(&file, "x").unwrap();
        std::os::unix::fs::symlink(&file, dir.path().join("link")).unwrap();
        assert_eq!(read_to_string(&dir.path().join("link")).unwrap(), "x");
    }
}
