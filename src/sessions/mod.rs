//! Saved sessions: every conversation is appended, record by record, to a JSONL file
//! under `$HARNESS9_HOME/sessions/<project>/<id>.jsonl`, so it can be resumed, listed,
//! exported and pruned (docs/SESSIONS.md).
//!
//! This module owns the file format ([`record`]), the layout ([`layout`]), writing
//! ([`writer`]), reading ([`reader`]), the store that finds, lists and prunes files
//! ([`store`]), the exports ([`export`]) and the `harness9 sessions` subcommand's output
//! ([`cli`]), the store as a running session uses it ([`live`]) and the one-writer lock
//! ([`lock`]). It must not know
//! how the agent replays a session or how a frontend shows one.

pub mod cli;
pub mod error;
pub mod export;
pub mod layout;
mod line;
pub mod lock;
pub mod reader;
pub mod record;
pub mod store;
pub mod writer;

pub use error::{FindError, IoAction, SessionError};
pub use layout::{project_dir_name, project_of};
pub use reader::{ReadReport, SessionSummary, read, read_for_resume, read_header, summary};
pub use record::{Header, NoteKind, Record, SessionId, endpoint_host};
pub use store::{ListScope, PruneReport, SessionFile, SessionStore, format_age, parse_age};
pub use writer::SessionWriter;

/// A header for tests: project `project` (also the cwd), created at `created_ms`, with a
/// fresh id that no other test header in this process has.
#[cfg(test)]
pub(crate) fn test_header(project: &str, created_ms: u64) -> Header {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let id = format!("{}-{n:06x}", record::compact_utc(created_ms / 1000));
    test_header_with_id(&id, project, created_ms)
}

/// A store in a fresh temporary directory, for tests (keep the directory alive).
#[cfg(test)]
#[allow(clippy::expect_used)]
pub(crate) fn temp_store() -> (tempfile::TempDir, SessionStore) {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let store = SessionStore::new(tmp.path());
    (tmp, store)
}

/// A header for tests with the id `id`.
#[cfg(test)]
#[allow(clippy::expect_used)]
pub(crate) fn test_header_with_id(id: &str, project: &str, created_ms: u64) -> Header {
    Header {
        schema: record::SCHEMA_VERSION,
        id: SessionId::parse(id).expect("a valid test id"),
        created_ms,
        cwd: project.into(),
        project: project.into(),
        model: "test-model".into(),
        endpoint_host: "127.0.0.1:8080".into(),
        version: "0.1.0".into(),
    }
}
