//! The errors of saved sessions: [`SessionError`] for reading, writing and removing
//! session files, [`FindError`] for looking a session up by what a user typed.
//!
//! It owns the wording users see for these failures. It must not know how a frontend
//! shows them or which exit code they become (that is `main.rs`'s).

use std::io;
use std::path::PathBuf;

use super::record::SessionId;

/// What was being done to a file when an I/O error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoAction {
    /// Creating a file or a folder.
    Create,
    /// Opening or reading a file.
    Read,
    /// Writing to a file.
    Write,
    /// Listing a folder.
    List,
    /// Removing a file or folder.
    Remove,
    /// Renaming a file into place.
    Rename,
}

impl std::fmt::Display for IoAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IoAction::Create => "create",
            IoAction::Read => "read",
            IoAction::Write => "write",
            IoAction::List => "list",
            IoAction::Remove => "remove",
            IoAction::Rename => "rename",
        })
    }
}

/// Why a session file could not be written, read or removed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// An I/O error on a file or folder of the store.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done.
        action: IoAction,
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A new session's file already exists (never overwritten).
    #[error("{path} already exists; a new session never overwrites a file")]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// The file's first line is not a session header.
    #[error("{path} is not a harness9 session (its first line is not a session header)")]
    NotASession {
        /// The file.
        path: PathBuf,
    },
    /// The first line is a header, but a damaged one.
    #[error("the header of {path} is damaged: {reason}")]
    BadHeader {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
    /// A record could not be turned into JSON (a bug).
    #[error("cannot encode a {kind} record: {source}")]
    Encode {
        /// The record's type.
        kind: &'static str,
        /// The serializer's error.
        source: serde_json::Error,
    },
    /// A header whose id could name a path outside the sessions folder.
    #[error("{id:?} is not a valid session id")]
    InvalidId {
        /// The id.
        id: String,
    },
    /// Another process writes the session (it holds the file's lock).
    #[error("{}", in_use_text(path, *pid))]
    InUse {
        /// The session file.
        path: PathBuf,
        /// The process writing it, when it could be found.
        pid: Option<u32>,
    },
    /// Writing an export or a listing to its destination failed.
    #[error("cannot write the output: {source}")]
    Output {
        /// The error.
        source: io::Error,
    },
}

fn in_use_text(path: &std::path::Path, pid: Option<u32>) -> String {
    let id = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let who = match pid {
        Some(pid) if pid == std::process::id() => "this harness9 process".to_string(),
        Some(pid) => format!("another harness9 process (pid {pid})"),
        None => "another harness9 process".to_string(),
    };
    format!(
        "session {id} is open in {who}; two processes writing it would mix their records, \
         so end that one first (or start a new session)"
    )
}

impl SessionError {
    /// An I/O error on `path`.
    pub(crate) fn io(action: IoAction, path: impl Into<PathBuf>, source: io::Error) -> Self {
        SessionError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// Why an id (or prefix) typed by a user names no single session.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    /// No session id starts with it.
    #[error("no session matches {query:?} (harness9 sessions list shows them)")]
    NotFound {
        /// What was typed.
        query: String,
    },
    /// Several ids start with it.
    #[error("{}", ambiguous_text(query, candidates, *total))]
    Ambiguous {
        /// What was typed.
        query: String,
        /// Up to [`MAX_CANDIDATES`] of the matching ids, oldest first.
        candidates: Vec<SessionId>,
        /// How many ids match in all.
        total: usize,
    },
    /// It cannot be an id (only letters, digits and `-` are).
    #[error(
        "{query:?} is not a session id: ids hold only letters, digits and `-` \
         (e.g. 20261123-173501-a3f9c2)"
    )]
    InvalidId {
        /// What was typed.
        query: String,
    },
    /// The store could not be searched.
    #[error(transparent)]
    Store(#[from] SessionError),
}

/// How many candidates [`FindError::Ambiguous`] lists.
pub const MAX_CANDIDATES: usize = 10;

fn ambiguous_text(query: &str, candidates: &[SessionId], total: usize) -> String {
    let mut text = format!("{query:?} matches {total} sessions; type more of the id:");
    for id in candidates {
        text.push_str("\n  ");
        text.push_str(id.as_str());
    }
    if total > candidates.len() {
        text.push_str(&format!("\n  … and {} more", total - candidates.len()));
    }
    text
}
