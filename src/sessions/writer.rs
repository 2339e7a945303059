//! Appending records to a session file. Each record is one line written by one
//! `write_all` on a file opened with `O_APPEND`, with nothing buffered between records,
//! so a crash (even `kill -9`) at any moment loses at most the record being written, and
//! that one only as a torn last line, which the reader skips. A writer holds the
//! file's lock ([`super::lock`]) for its whole life: one process writes a session at a
//! time. Secret values
//! ([`crate::redact::saved`]) are replaced in every record before it is written.
//!
//! It owns the write path only. It must not know where files live (the store decides)
//! or what the records mean.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::error::{IoAction, SessionError};
use super::layout::private_append_options;
use super::reader::read_header;
use super::record::{Header, MessageRecord, Record, SessionId};
use crate::llm::Message;

/// An open session file that records are appended to.
#[derive(Debug)]
pub struct SessionWriter {
    file: File,
    path: PathBuf,
    id: SessionId,
}

impl SessionWriter {
    /// Creates `path` (never over an existing file) and writes the header line.
    pub(super) fn create(path: PathBuf, header: &Header) -> Result<SessionWriter, SessionError> {
        let file = private_append_options()
            .create_new(true)
            .open(&path)
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::AlreadyExists => SessionError::Exists { path: path.clone() },
                _ => SessionError::io(IoAction::Create, &path, source),
            })?;
        // Locked before the header is written: nobody can resume it before then.
        super::lock::lock_for_writing(&file, &path)?;
        let writer = SessionWriter {
            file,
            path,
            id: header.id.clone(),
        };
        if let Err(e) = writer.append(&Record::Header(header.clone())) {
            // A file without its header is not a session: leave nothing behind.
            let _ = std::fs::remove_file(&writer.path);
            return Err(e);
        }
        Ok(writer)
    }

    /// Opens an existing session to append to (resume). When the file does not end with
    /// a newline (its last record was torn by a crash), a newline is written first so
    /// the next record starts on a line of its own.
    pub(super) fn open_append(path: &Path) -> Result<SessionWriter, SessionError> {
        let header = read_header(path)?;
        let mut file = private_append_options()
            .read(true)
            .open(path)
            .map_err(|source| SessionError::io(IoAction::Read, path, source))?;
        // One writer at a time: another harness9 writing this session refuses this one.
        super::lock::lock_for_writing(&file, path)?;
        let len = file
            .metadata()
            .map_err(|source| SessionError::io(IoAction::Read, path, source))?
            .len();
        if len > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(len - 1))
                .and_then(|_| file.read_exact(&mut last))
                .map_err(|source| SessionError::io(IoAction::Read, path, source))?;
            if last[0] != b'\n' {
                file.write_all(b"\n")
                    .map_err(|source| SessionError::io(IoAction::Write, path, source))?;
            }
        }
        Ok(SessionWriter {
            file,
            path: path.to_path_buf(),
            id: header.id,
        })
    }

    /// Appends one record as one line.
    pub fn append(&self, record: &Record) -> Result<(), SessionError> {
        self.write_line(record, record.type_name())
    }

    /// Appends a `message` record without copying the message.
    pub fn append_message(&self, turn: u64, message: &Message) -> Result<(), SessionError> {
        self.write_line(&MessageRecord { turn, message }, "message")
    }

    /// One record as one line, written with one `write_all`.
    fn write_line(
        &self,
        value: &impl serde::Serialize,
        kind: &'static str,
    ) -> Result<(), SessionError> {
        let line =
            serde_json::to_vec(value).map_err(|source| SessionError::Encode { kind, source })?;
        // The key, header values and the environment's secrets never reach the file,
        // whoever printed them (the model, a command, a provider's error body).
        let mut line = crate::redact::saved().redact_json_line(line);
        line.push(b'\n');
        (&self.file)
            .write_all(&line)
            .map_err(|source| SessionError::io(IoAction::Write, &self.path, source))
    }

    /// The session file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.id
    }
}
