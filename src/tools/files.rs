//! Where the file tools read and write a file they were allowed to touch: the disk
//! ([`FileAccess::Disk`], the default), or an editor's buffers ([`FileAccess::Editor`]:
//! a frontend's [`EditorFiles`], e.g. ACP's `fs/read_text_file` and
//! `fs/write_text_file`), so unsaved edits are read and changes show in the editor.
//!
//! It is asked only after a call was judged (permission rules, secret and `.git/`
//! rules, the sandbox's writable folders, all on the resolved path): it never decides
//! what may be touched. Before the editor is asked, the path is checked on disk without
//! following links (a regular file or nothing, its folders link-free), and a write
//! through the editor is then made on disk too ([`nofollow::replace`]), so what the
//! file holds afterwards is what harness9 wrote, undo's pictures see it, and a link
//! that appeared is refused. An editor that fails or does not answer in time is a
//! tool error ([`EditorFileError`]), never a wait without end. It must not know which
//! frontend or protocol the editor speaks.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use super::write_file::{Existing, read_existing};
use super::{ToolContext, ToolFatal, run_blocking_until};
use crate::nofollow::{self, FileError, FileKind, Parents};

/// What an editor's file call returns.
pub type EditorFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, EditorFileError>> + Send + 'a>>;

/// An editor that reads and writes files through its buffers.
pub trait EditorFiles: Send + Sync {
    /// The text of the file at `real` as the editor holds it (unsaved edits included).
    fn read_text<'a>(&'a self, real: &'a Path) -> EditorFuture<'a, String>;
    /// Replaces the whole text of the file at `real` in the editor.
    fn write_text<'a>(&'a self, real: &'a Path, text: &'a str) -> EditorFuture<'a, ()>;
}

/// Why the editor could not read or write a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditorFileError {
    /// It answered with an error.
    #[error("the editor refused: {0}")]
    Refused(String),
    /// It sent something that is not an answer of the right shape.
    #[error("the editor's answer is not usable: {0}")]
    BadAnswer(String),
    /// It did not answer in time.
    #[error("the editor did not answer within {seconds} s")]
    TimedOut {
        /// The time it had.
        seconds: u64,
    },
    /// It is gone (its connection closed).
    #[error("the editor is gone")]
    Gone,
}

/// Where the file tools read and write.
#[derive(Clone, Default)]
pub enum FileAccess {
    /// On disk, directly.
    #[default]
    Disk,
    /// Through an editor's buffers for what it offers (checked and mirrored on disk),
    /// on disk for the rest.
    Editor {
        /// The editor.
        files: Arc<dyn EditorFiles>,
        /// What it offers.
        offers: EditorOffers,
    },
}

/// What an editor offers to do with files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditorOffers {
    /// Reading them (writes go to disk).
    Reads,
    /// Writing them (reads come from disk).
    Writes,
    /// Both.
    ReadsAndWrites,
}

impl FileAccess {
    /// The editor to read through, if reads go through one.
    pub fn reader(&self) -> Option<&dyn EditorFiles> {
        match self {
            FileAccess::Editor {
                files,
                offers: EditorOffers::Reads | EditorOffers::ReadsAndWrites,
            } => Some(files.as_ref()),
            _ => None,
        }
    }

    /// The editor to write through, if writes go through one.
    pub fn writer(&self) -> Option<&dyn EditorFiles> {
        match self {
            FileAccess::Editor {
                files,
                offers: EditorOffers::Writes | EditorOffers::ReadsAndWrites,
            } => Some(files.as_ref()),
            _ => None,
        }
    }
}

impl std::fmt::Debug for FileAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileAccess::Disk => f.write_str("Disk"),
            FileAccess::Editor { offers, .. } => write!(f, "Editor({offers:?})"),
        }
    }
}

/// Why a judged file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AccessError {
    /// On disk (what stands there, a link on the way, I/O).
    #[error("{0}")]
    File(#[from] FileError),
    /// The editor failed.
    #[error("{0}")]
    Editor(#[from] EditorFileError),
    /// Something that is not a regular file stands at the path.
    #[error("not a regular file")]
    NotRegular,
}

/// What the judged file `real` holds, up to `cap` bytes (like [`read_existing`]): from
/// the editor when the session has one and the file exists on disk as a regular file
/// reached without links; from disk otherwise.
pub(crate) async fn read_judged(
    ctx: &ToolContext,
    real: &Path,
    cap: u64,
) -> Result<Result<Existing, AccessError>, ToolFatal> {
    let owned = real.to_path_buf();
    let on_disk = run_blocking_until(&ctx.cancel, move || read_existing(&owned, cap)).await?;
    let Some(editor) = ctx.files.reader() else {
        return Ok(on_disk.map_err(AccessError::from));
    };
    match on_disk {
        // Only a file that is there is asked for: a new file has no buffer.
        Ok(Existing::Bytes(_) | Existing::TooLarge(_)) => {}
        other => return Ok(other.map_err(AccessError::from)),
    }
    let text = tokio::select! {
        text = editor.read_text(real) => text,
        () = ctx.cancel.cancelled() => return Err(ToolFatal::Interrupted),
    };
    Ok(match text {
        Ok(text) if text.len() as u64 > cap => Ok(Existing::TooLarge(text.len() as u64)),
        Ok(text) => Ok(Existing::Bytes(text.into_bytes())),
        Err(e) => Err(e.into()),
    })
}

/// Writes `text` to the judged file `real`: through the editor first when the session
/// has one (after checking that nothing but a regular file stands there, its folders
/// made with `parents` and reached without links), then on disk atomically without
/// following links, so the file holds `text` whatever the editor did with it.
pub(crate) async fn write_judged(
    ctx: &ToolContext,
    real: &Path,
    text: &str,
    parents: Parents,
) -> Result<Result<(), AccessError>, ToolFatal> {
    if let Some(editor) = ctx.files.writer() {
        let owned = real.to_path_buf();
        let standing = run_blocking_until(&ctx.cancel, move || {
            let parent = owned.parent().unwrap_or(Path::new("/"));
            nofollow::open_dir(parent, parents)?;
            nofollow::kind_of(&owned)
        })
        .await?;
        match standing {
            Ok(None | Some(FileKind::Regular)) => {}
            Ok(Some(FileKind::Directory)) => return Ok(Err(FileError::Directory.into())),
            Ok(Some(_)) => return Ok(Err(AccessError::NotRegular)),
            Err(e) => return Ok(Err(e.into())),
        }
        let written = tokio::select! {
            written = editor.write_text(real, text) => written,
            () = ctx.cancel.cancelled() => return Err(ToolFatal::Interrupted),
        };
        if let Err(e) = written {
            return Ok(Err(e.into()));
        }
    }
    let owned = real.to_path_buf();
    let bytes = text.as_bytes().to_vec();
    let replaced = run_blocking_until(&ctx.cancel, move || {
        nofollow::replace(&owned, &bytes, parents)
    })
    .await?;
    Ok(replaced.map_err(AccessError::from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// An editor holding buffers in memory, or failing every call with `fails`.
    #[derive(Default)]
    struct Buffers {
        texts: Mutex<std::collections::HashMap<std::path::PathBuf, String>>,
        writes: Mutex<Vec<std::path::PathBuf>>,
        fails: Option<EditorFileError>,
    }

    impl EditorFiles for Buffers {
        fn read_text<'a>(&'a self, real: &'a Path) -> EditorFuture<'a, String> {
            Box::pin(async move {
                if let Some(e) = &self.fails {
                    return Err(e.clone());
                }
                Ok(self
                    .texts
                    .lock()
                    .unwrap()
                    .get(real)
                    .cloned()
                    .unwrap_or_default())
            })
        }

        fn write_text<'a>(&'a self, real: &'a Path, text: &'a str) -> EditorFuture<'a, ()> {
            Box::pin(async move {
                if let Some(e) = &self.fails {
                    return Err(e.clone());
                }
                self.writes.lock().unwrap().push(real.to_path_buf());
                self.texts
                    .lock()
                    .unwrap()
                    .insert(real.to_path_buf(), text.to_string());
                Ok(())
            })
        }
    }

    fn with_editor(ctx: &mut ToolContext, buffers: Buffers) -> Arc<Buffers> {
        let buffers = Arc::new(buffers);
        ctx.files = FileAccess::Editor {
            files: buffers.clone(),
            offers: EditorOffers::ReadsAndWrites,
        };
        buffers
    }

    #[tokio::test]
    async fn the_editors_text_is_read_for_a_file_that_is_there() {
        let (dir, mut ctx) = super::super::test_tree(&[("a.txt", "on disk\n")]);
        let real = dir.path().canonicalize().unwrap().join("a.txt");
        let buffers = Buffers::default();
        buffers
            .texts
            .lock()
            .unwrap()
            .insert(real.clone(), "unsaved\n".into());
        with_editor(&mut ctx, buffers);
        let read = read_judged(&ctx, &real, 1024).await.unwrap().unwrap();
        assert_eq!(read, Existing::Bytes(b"unsaved\n".to_vec()));
        // A file that is not there is not asked for.
        let absent = dir.path().canonicalize().unwrap().join("none.txt");
        let read = read_judged(&ctx, &absent, 1024).await.unwrap().unwrap();
        assert_eq!(read, Existing::Absent);
    }

    #[tokio::test]
    async fn a_link_is_refused_before_the_editor_is_asked() {
        let (dir, mut ctx) = super::super::test_tree(&[("target.txt", "secret\n")]);
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(root.join("target.txt"), root.join("link.txt")).unwrap();
        let buffers = with_editor(&mut ctx, Buffers::default());
        assert!(
            read_judged(&ctx, &root.join("link.txt"), 1024)
                .await
                .unwrap()
                .is_err()
        );
        assert!(
            write_judged(&ctx, &root.join("link.txt"), "x", Parents::Existing)
                .await
                .unwrap()
                .is_err()
        );
        assert!(buffers.writes.lock().unwrap().is_empty());
        assert_eq!(
            std::fs::read_to_string(root.join("target.txt")).unwrap(),
            "secret\n"
        );
    }

    #[tokio::test]
    async fn a_write_goes_through_the_editor_and_then_to_disk() {
        let (dir, mut ctx) = super::super::test_tree(&[("a.txt", "old\n")]);
        let real = dir.path().canonicalize().unwrap().join("a.txt");
        let buffers = with_editor(&mut ctx, Buffers::default());
        write_judged(&ctx, &real, "new\n", Parents::Existing)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(*buffers.writes.lock().unwrap(), vec![real.clone()]);
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new\n");
    }

    #[tokio::test]
    async fn an_editor_that_fails_leaves_the_file_as_it_was() {
        let (dir, mut ctx) = super::super::test_tree(&[("a.txt", "old\n")]);
        let real = dir.path().canonicalize().unwrap().join("a.txt");
        for fails in [
            EditorFileError::Refused("no".into()),
            EditorFileError::TimedOut { seconds: 1 },
            EditorFileError::Gone,
        ] {
            with_editor(
                &mut ctx,
                Buffers {
                    fails: Some(fails.clone()),
                    ..Buffers::default()
                },
            );
            let written = write_judged(&ctx, &real, "new\n", Parents::Existing)
                .await
                .unwrap();
            assert!(
                matches!(&written, Err(AccessError::Editor(e)) if *e == fails),
                "{written:?}"
            );
            assert_eq!(std::fs::read_to_string(&real).unwrap(), "old\n");
            let read = read_judged(&ctx, &real, 1024).await.unwrap();
            assert!(matches!(read, Err(AccessError::Editor(_))), "{read:?}");
        }
    }
}
