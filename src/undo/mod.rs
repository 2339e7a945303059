//! `/undo` and `/diff`: pictures of the project's files ([`manifest`]) taken before the
//! first call of a turn that may change something (an edit, a command, an MCP tool) and
//! when the turn ends, so that what the turn changed — by any tool, `bash` included — is
//! known file by file and can be put back.
//!
//! [`Snapshots::undo`] restores the files the last turn with changes changed: their
//! content and permissions as they were before it, and files it created removed. It
//! never deletes a file the turn did not create, and it refuses, naming them, when any of
//! those files changed after the turn ended (someone else's work would be lost) or was too
//! large to keep. [`Snapshots::diff`] shows what the session changed since its first
//! picture. Ignored files (`.gitignore`) are not pictured, so changes to them are neither
//! shown nor undone. It knows files and the store; it must not know the agent loop or
//! frontends.

pub mod manifest;
pub mod store;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::nofollow::{self, FileError, Parents};
use crate::protocol::UndoOutcome;
use manifest::{FileKind, FileState, Manifest, SnapshotError};
use store::Store;

/// The most of a `/diff` shown, in bytes.
const MAX_DIFF_BYTES: usize = 200_000;

/// What one turn changed: each path's state before and after (`None`: absent).
#[derive(Debug, Clone)]
struct TurnChange {
    /// The conversation's turn it belongs to (a `!` command's: the turn before it).
    turn: u64,
    paths: Vec<(String, Option<FileState>, Option<FileState>)>,
    /// Folders that were not there before the turn, parents first.
    folders: Vec<String>,
}

#[derive(Default)]
struct State {
    /// The first picture of the session.
    baseline: Option<Manifest>,
    /// The latest picture.
    last: Option<Manifest>,
    /// The picture before the turn under way, once one was needed.
    turn_before: Option<Manifest>,
    /// The folders there were before the turn under way.
    folders_before: BTreeSet<String>,
    /// Turns with changes, oldest first.
    stack: Vec<TurnChange>,
    /// Turns undone so far (by `/undo` or a rewind).
    undone: usize,
}

/// The session's pictures of its project. Cheap to clone (shared).
#[derive(Clone)]
pub struct Snapshots(Arc<Inner>);

struct Inner {
    project: PathBuf,
    store: Store,
    state: Mutex<State>,
}

impl std::fmt::Debug for Snapshots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshots")
            .field("project", &self.0.project)
            .finish()
    }
}

/// Why `/undo` or `/diff` failed.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    /// The project could not be pictured.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// A file's kept content could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A file could not be looked at or put back.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: String,
        /// The error.
        source: FileError,
    },
    /// A symbolic link stands on the way to a file or folder being put back (put there
    /// after the check, during the undo): nothing was put back through it.
    #[error("{path}: a symbolic link stands on the way now; nothing was put back through it")]
    LinkOnTheWay {
        /// The file or folder, relative to the project.
        path: String,
    },
}

impl UndoError {
    /// `source`, met putting back `path`: a link on the way is named as such.
    fn file(path: &str, source: FileError) -> UndoError {
        match source {
            FileError::LinkAppeared(_) => UndoError::LinkOnTheWay {
                path: path.to_string(),
            },
            source => UndoError::File {
                path: path.to_string(),
                source,
            },
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Run between the check and the act of an undo: tests swap a link in there.
    static BETWEEN_CHECK_AND_ACT: std::cell::RefCell<Option<Box<dyn FnMut()>>> =
        const { std::cell::RefCell::new(None) };
}

/// The note the model gets with the user's next message after files were put back, so
/// it does not believe what it changed is still there.
pub fn undo_note(outcome: &UndoOutcome) -> String {
    format!(
        "[The user ran /undo: the file changes of an earlier turn were reverted. {} Read \
         files again before relying on what you saw of them.]",
        outcome.describe()
    )
}

impl Snapshots {
    /// Pictures of `project`, kept under `root` (`$HARNESS9_HOME/snapshots`).
    pub fn new(project: &Path, root: &Path) -> Self {
        // Files are put back through handles opened without following links from `/`:
        // the project's own path must be its real one (the session's already is).
        let project = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
        Snapshots(Arc::new(Inner {
            project,
            store: Store::new(root),
            state: Mutex::new(State::default()),
        }))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Every update replaces whole fields: a poisoned lock holds a whole state.
        self.0.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take(&self) -> Result<(Manifest, BTreeSet<String>), SnapshotError> {
        let previous = self.state().last.clone();
        let (manifest, folders) =
            manifest::take_with_folders(&self.0.project, previous.as_ref(), &self.0.store)?;
        self.state().last = Some(manifest.clone());
        Ok((manifest, folders))
    }

    /// Makes sure the turn under way has its "before" picture (blocking: call it off the
    /// async threads). The first one is the session's baseline.
    pub fn before_change(&self) -> Result<(), SnapshotError> {
        if self.state().turn_before.is_some() {
            return Ok(());
        }
        let (manifest, folders) = self.take()?;
        let mut state = self.state();
        state.baseline.get_or_insert_with(|| manifest.clone());
        state.turn_before = Some(manifest);
        state.folders_before = folders;
        Ok(())
    }

    /// Ends conversation turn `turn`: when it had a "before" picture, takes the "after"
    /// one and records what changed (blocking). Returns how many files changed.
    pub fn end_turn(&self, turn: u64) -> Result<usize, SnapshotError> {
        let Some(before) = self.state().turn_before.take() else {
            return Ok(0);
        };
        let folders_before = std::mem::take(&mut self.state().folders_before);
        let (after, folders_after) = self.take()?;
        let paths = changes(&before, &after);
        let count = paths.len();
        // Sorted, so a folder comes before the folders inside it.
        let folders: Vec<String> = folders_after.difference(&folders_before).cloned().collect();
        if count > 0 || !folders.is_empty() {
            self.state().stack.push(TurnChange {
                turn,
                paths,
                folders,
            });
        }
        Ok(count)
    }

    /// Puts back what the last turn with changes changed (blocking).
    pub fn undo(&self) -> Result<UndoOutcome, UndoError> {
        let last = self.state().stack.last().cloned();
        match last {
            Some(change) => self.undo_change(&change),
            None => Ok(UndoOutcome::NothingToUndo {
                undone_before: self.state().undone,
            }),
        }
    }

    /// The files that turn `turn` and the turns after it changed (what rewinding to
    /// just before it would put back), sorted.
    pub fn changed_since_turn(&self, turn: u64) -> Vec<String> {
        let mut files: Vec<String> = self
            .state()
            .stack
            .iter()
            .filter(|c| c.turn >= turn)
            .flat_map(|c| c.paths.iter().map(|(path, _, _)| path.clone()))
            .collect();
        files.sort();
        files.dedup();
        files
    }

    /// Puts back what turn `turn` and every later turn changed, newest first (blocking);
    /// stops at the first turn that cannot be undone (its refusal is the last outcome).
    pub fn rewind(&self, turn: u64) -> Result<Vec<UndoOutcome>, UndoError> {
        let mut outcomes = Vec::new();
        loop {
            let last = self.state().stack.last().cloned();
            let Some(change) = last.filter(|c| c.turn >= turn) else {
                break;
            };
            let outcome = self.undo_change(&change)?;
            let refused = matches!(outcome, UndoOutcome::Refused { .. });
            outcomes.push(outcome);
            if refused {
                break;
            }
        }
        Ok(outcomes)
    }

    /// Undoes `change`, the last on the stack. Every look and every act goes through
    /// `nofollow`, relative to folder handles opened without following a link: a link
    /// standing on the way now refuses the whole undo before anything changes, and one
    /// swapped in after that check fails the act at it, so nothing is ever written,
    /// removed or created outside the project.
    fn undo_change(&self, change: &TurnChange) -> Result<UndoOutcome, UndoError> {
        let project = &self.0.project;
        let store = &self.0.store;
        let mut changed_since = Vec::new();
        let mut too_large = Vec::new();
        let mut links_on_the_way = Vec::new();
        for (path, before, after) in &change.paths {
            let now = match manifest::current(project, path, store, after.as_ref()) {
                Ok(now) => now,
                Err(FileError::LinkAppeared(_)) => {
                    links_on_the_way.push(path.clone());
                    continue;
                }
                Err(e) => return Err(UndoError::file(path, e)),
            };
            let same = match (&now, after) {
                (None, None) => true,
                (Some(n), Some(a)) => n.same_content(a),
                _ => false,
            };
            if !same {
                changed_since.push(path.clone());
            }
            if matches!(
                before,
                Some(FileState {
                    kind: FileKind::Large,
                    ..
                })
            ) {
                too_large.push(path.clone());
            }
        }
        for folder in &change.folders {
            // A link where the folder was, or on the way to it, could lead anywhere.
            match nofollow::stat(&project.join(folder)) {
                Ok(Some(seen)) if seen.kind == nofollow::FileKind::Symlink => {
                    links_on_the_way.push(folder.clone());
                }
                Err(FileError::LinkAppeared(_)) => links_on_the_way.push(folder.clone()),
                // Gone, or not to be looked at: it is left where it is (below).
                Ok(_) | Err(_) => {}
            }
        }
        if !changed_since.is_empty() || !too_large.is_empty() || !links_on_the_way.is_empty() {
            return Ok(UndoOutcome::Refused {
                changed_since,
                too_large,
                links_on_the_way,
            });
        }
        #[cfg(test)]
        BETWEEN_CHECK_AND_ACT.with_borrow_mut(|hook| {
            if let Some(hook) = hook.as_mut() {
                hook();
            }
        });
        let mut restored = Vec::new();
        let mut removed = Vec::new();
        for (path, before, _) in &change.paths {
            let target = project.join(path);
            match before {
                None => {
                    nofollow::remove(&target).map_err(|e| UndoError::file(path, e))?;
                    removed.push(path.clone());
                }
                Some(state) => {
                    restore(&target, path, state, store)?;
                    restored.push(path.clone());
                }
            }
        }
        // Folders the turn created go when nothing is left in them (innermost first);
        // a folder that holds anything now (ignored files too) stays.
        let mut removed_folders = Vec::new();
        for folder in change.folders.iter().rev() {
            match nofollow::remove_empty_dir(&project.join(folder)) {
                Ok(()) => removed_folders.push(folder.clone()),
                Err(e @ FileError::LinkAppeared(_)) => return Err(UndoError::file(folder, e)),
                // Not empty, or gone: it stays.
                Err(_) => {}
            }
        }
        removed_folders.reverse();
        let mut state = self.state();
        state.stack.pop();
        state.undone += 1;
        // The next picture reads the restored files again (their times changed).
        state.last = None;
        Ok(UndoOutcome::Restored {
            restored,
            removed,
            removed_folders,
        })
    }

    /// What the session changed since its first picture, as a unified diff (blocking);
    /// `None` when nothing was pictured yet.
    pub fn diff(&self) -> Result<Option<String>, UndoError> {
        let Some(baseline) = self.state().baseline.clone() else {
            return Ok(None);
        };
        let (now, _) = self.take()?;
        let mut out = String::new();
        for (path, before, after) in changes(&baseline, &now) {
            if out.len() > MAX_DIFF_BYTES {
                out.push_str("[… more changes not shown]\n");
                break;
            }
            out.push_str(&file_diff(
                &path,
                before.as_ref(),
                after.as_ref(),
                &self.0.store,
            ));
        }
        Ok(Some(out))
    }
}

/// The paths whose state differs between two pictures.
fn changes(
    before: &Manifest,
    after: &Manifest,
) -> Vec<(String, Option<FileState>, Option<FileState>)> {
    let mut out = Vec::new();
    for (path, b) in before {
        match after.get(path) {
            Some(a) if a.same_content(b) => {}
            other => out.push((path.clone(), Some(b.clone()), other.cloned())),
        }
    }
    for (path, a) in after {
        if !before.contains_key(path) {
            out.push((path.clone(), None, Some(a.clone())));
        }
    }
    out.sort_by(|x, y| x.0.cmp(&y.0));
    out
}

/// Writes `state` back at `target` (`path` in the project), through `nofollow`: content
/// with its exact permission bits through a temp file renamed over what stands there, a
/// link made beside it and renamed over it; missing folders made with `mkdirat`.
fn restore(target: &Path, path: &str, state: &FileState, store: &Store) -> Result<(), UndoError> {
    let put = match &state.kind {
        FileKind::Stored(digest) => {
            let bytes = store.get(digest).map_err(|source| UndoError::Io {
                path: path.to_string(),
                source,
            })?;
            nofollow::put_back(target, &bytes, state.mode, Parents::Create)
        }
        FileKind::Link(to) => nofollow::put_link(target, to, Parents::Create),
        FileKind::Large => Err(FileError::Io(std::io::Error::other(
            "too large to have been kept",
        ))),
    };
    put.map_err(|e| UndoError::file(path, e))
}

/// One file's part of a diff.
fn file_diff(
    path: &str,
    before: Option<&FileState>,
    after: Option<&FileState>,
    store: &Store,
) -> String {
    let text = |state: Option<&FileState>| -> Option<String> {
        match state.map(|s| &s.kind) {
            None => Some(String::new()),
            Some(FileKind::Stored(d)) => store.get(d).ok().and_then(|b| String::from_utf8(b).ok()),
            Some(FileKind::Link(to)) => Some(format!("-> {}\n", to.display())),
            Some(FileKind::Large) => None,
        }
    };
    let (old_name, new_name) = (
        if before.is_some() {
            format!("a/{path}")
        } else {
            "/dev/null".into()
        },
        if after.is_some() {
            format!("b/{path}")
        } else {
            "/dev/null".into()
        },
    );
    match (text(before), text(after)) {
        (Some(old), Some(new)) if old != new || before.map(|b| b.mode) == after.map(|a| a.mode) => {
            similar::TextDiff::from_lines(&old, &new)
                .unified_diff()
                .header(&old_name, &new_name)
                .to_string()
        }
        (Some(_), Some(_)) => format!("--- {old_name}\n+++ {new_name}\n(permissions changed)\n"),
        _ => format!("--- {old_name}\n+++ {new_name}\n(binary or large file changed)\n"),
    }
}

#[cfg(test)]
mod tests;
