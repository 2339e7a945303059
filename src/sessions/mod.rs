//! Saved sessions: every conversation is appended, record by record, to a JSONL file
//! under `$HARNESS9_HOME/sessions/<project>/<id>.jsonl`, so it can be resumed, listed,
//! exported and pruned.
//!
//! This module owns the file format ([`record`]) and the files. It must not know how
//! the agent replays a session or how a frontend shows one.

pub mod record;

pub use record::{Header, Record, SessionId};
