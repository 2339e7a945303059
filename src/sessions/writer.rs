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
use crate::redact::Redactor;

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

    /// One record as one line. A record up to [`PIECE`] bytes is serialized into memory
    /// and written with one `write_all`, as it always was. A longer one (a long answer,
    /// a large tool result) is serialized straight into the file, [`PIECE`] bytes at a
    /// time, so it is never in memory twice (as the message and as its line); when a
    /// secret value may be in it, it is first serialized once to look for one (reading,
    /// not keeping), and a line that holds one is written the in-memory way, redacted.
    fn write_line(
        &self,
        value: &impl serde::Serialize,
        kind: &'static str,
    ) -> Result<(), SessionError> {
        // The key, header values and the environment's secrets never reach the file,
        // whoever printed them (the model, a command, a provider's error body).
        self.write_redacted(value, kind, crate::redact::saved())
    }

    /// [`SessionWriter::write_line`] with the values of `redactor` replaced.
    fn write_redacted(
        &self,
        value: &impl serde::Serialize,
        kind: &'static str,
        redactor: &Redactor,
    ) -> Result<(), SessionError> {
        let encode = |source| SessionError::Encode { kind, source };
        let mut first = Piece::Held(Vec::new());
        match serde_json::to_writer(&mut first, value) {
            Ok(()) => {
                let Piece::Held(line) = first else {
                    return Ok(());
                };
                return self.write_whole(line, redactor);
            }
            Err(e) if e.is_io() => {}
            Err(e) => return Err(encode(e)),
        }
        drop(first);
        if !redactor.is_empty() {
            let mut scan = SecretScan::new(redactor);
            serde_json::to_writer(&mut scan, value).map_err(encode)?;
            if scan.found() {
                let line = serde_json::to_vec(value).map_err(encode)?;
                return self.write_whole(line, redactor);
            }
        }
        let mut pieces = Piece::Streamed {
            file: &self.file,
            buf: Vec::with_capacity(PIECE + 1),
            started: false,
        };
        let written = serde_json::to_writer(&mut pieces, value)
            .map_err(|e| match e.is_io() {
                true => SessionError::io(IoAction::Write, &self.path, std::io::Error::from(e)),
                false => encode(e),
            })
            .and_then(|()| {
                pieces
                    .end_line()
                    .map_err(|source| SessionError::io(IoAction::Write, &self.path, source))
            });
        if written.is_err() && pieces.started() {
            // Part of the line is in the file: end it, so the next record starts on a
            // line of its own (the reader skips this damaged one).
            let _ = (&self.file).write_all(b"\n");
        }
        written
    }

    /// A serialized line, redacted, written with one `write_all`.
    fn write_whole(&self, line: Vec<u8>, redactor: &Redactor) -> Result<(), SessionError> {
        let mut line = redactor.redact_json_line(line);
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

/// Bytes of a line held before it is written: a record this long or shorter is written
/// with one `write_all`; a longer one in parts of this size.
const PIECE: usize = 64 * 1024;

/// Where a line is serialized to.
enum Piece<'f> {
    /// Into memory, refusing (an I/O error) to grow past [`PIECE`].
    Held(Vec<u8>),
    /// Into the file, [`PIECE`] bytes at a time.
    Streamed {
        file: &'f File,
        buf: Vec<u8>,
        /// Whether a part has been written.
        started: bool,
    },
}

impl Piece<'_> {
    fn started(&self) -> bool {
        matches!(self, Piece::Streamed { started: true, .. })
    }

    /// Writes what is held and the newline.
    fn end_line(&mut self) -> std::io::Result<()> {
        match self {
            Piece::Held(_) => Ok(()),
            Piece::Streamed { file, buf, started } => {
                buf.push(b'\n');
                *started = true;
                (&**file).write_all(buf)
            }
        }
    }
}

impl Write for Piece<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self {
            Piece::Held(buf) => {
                if buf.len() + bytes.len() > PIECE {
                    return Err(std::io::Error::other("longer than one piece"));
                }
                buf.extend_from_slice(bytes);
            }
            Piece::Streamed { file, buf, started } => {
                if buf.len() + bytes.len() < PIECE {
                    buf.extend_from_slice(bytes);
                    return Ok(bytes.len());
                }
                *started = true;
                if !buf.is_empty() {
                    (&**file).write_all(buf)?;
                    buf.clear();
                }
                // A long run of text (serde writes a string's unescaped runs whole)
                // goes to the file as it is, not through the buffer.
                if bytes.len() >= PIECE {
                    (&**file).write_all(bytes)?;
                } else {
                    buf.extend_from_slice(bytes);
                }
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Looks for the saved-session secrets in a line as it is serialized, [`PIECE`] bytes
/// at a time (each part searched with the end of the one before it, so a value cut
/// between two is found), keeping nothing else.
struct SecretScan<'r> {
    redactor: &'r Redactor,
    buf: Vec<u8>,
    found: bool,
}

impl<'r> SecretScan<'r> {
    fn new(redactor: &'r Redactor) -> Self {
        SecretScan {
            redactor,
            buf: Vec::with_capacity(PIECE + 1),
            found: false,
        }
    }

    fn search(&mut self) {
        if !self.found && self.redactor.occurs_in_json(&self.buf) {
            self.found = true;
        }
    }

    /// Whether a value occurs anywhere in what was written.
    fn found(mut self) -> bool {
        self.search();
        self.found
    }
}

impl Write for SecretScan<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let keep = self.redactor.longest_json().saturating_sub(1);
        if bytes.len() < PIECE {
            self.buf.extend_from_slice(bytes);
        } else {
            // A long run is searched where it lies: the held end of what came before
            // with its first bytes, then the run itself, whose end is held next.
            self.buf.extend_from_slice(&bytes[..keep.min(bytes.len())]);
            self.search();
            self.buf.clear();
            if !self.found && self.redactor.occurs_in_json(bytes) {
                self.found = true;
            }
            self.buf
                .extend_from_slice(&bytes[bytes.len().saturating_sub(keep)..]);
        }
        if self.buf.len() >= PIECE {
            self.search();
            let cut = self.buf.len().saturating_sub(keep);
            self.buf.drain(..cut);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::reader::read;
    use crate::sessions::{temp_store, test_header};

    const SECRET: &str = "sk-live-0123456789abcdef";

    fn redactor() -> Redactor {
        Redactor::new().with(SECRET, crate::redact::REDACTED, 8)
    }

    /// A tool result of about `len` bytes in lines of 64 (escapes every line), with
    /// quotes and non-ASCII text, so a line is serialized in many small writes.
    fn long_output(len: usize, with_secret: bool) -> String {
        let line = "a \"quoted\" word, é, ü, 字 and a tab\tthen more text to fill it\n";
        let mut out = line.repeat(len / line.len() + 1);
        if with_secret {
            let middle = (out.len() / 2..)
                .find(|&i| out.is_char_boundary(i))
                .unwrap();
            out.insert_str(middle, SECRET);
            out.push_str(SECRET);
        }
        out
    }

    fn saved_messages(path: &Path) -> Vec<Message> {
        let mut messages = Vec::new();
        read(path, |record| {
            if let Record::Message { message, .. } = record {
                messages.push(message);
            }
        })
        .unwrap();
        messages
    }

    #[test]
    fn a_record_longer_than_a_piece_reads_back_as_it_was() {
        let (_tmp, store) = temp_store();
        let writer = store.create(&test_header("/p", 1)).unwrap();
        let output = long_output(5 * PIECE + 17, false);
        let answer = "one line, no escapes at all ".repeat(20_000);
        let tool = Message::Tool {
            tool_call_id: "c1".into(),
            content: output,
        };
        let assistant = Message::Assistant {
            content: answer.into(),
            reasoning: None,
            tool_calls: Vec::new(),
        };
        for redactor in [Redactor::new(), redactor()] {
            for message in [&tool, &assistant] {
                writer
                    .write_redacted(&MessageRecord { turn: 1, message }, "message", &redactor)
                    .unwrap();
            }
        }
        let text = std::fs::read_to_string(writer.path()).unwrap();
        // The header, then four records, each on its own line.
        assert_eq!(text.lines().count(), 5);
        assert_eq!(
            saved_messages(writer.path()),
            vec![tool.clone(), assistant.clone(), tool, assistant]
        );
    }

    #[test]
    fn a_long_record_holding_a_secret_is_saved_without_it() {
        let (_tmp, store) = temp_store();
        let writer = store.create(&test_header("/p", 1)).unwrap();
        let short = Message::Tool {
            tool_call_id: "c0".into(),
            content: format!("key {SECRET}"),
        };
        let long = Message::Tool {
            tool_call_id: "c1".into(),
            content: long_output(3 * PIECE, true),
        };
        let run = Message::Assistant {
            content: format!("{}{SECRET}{}", "x".repeat(PIECE * 2), "y".repeat(PIECE)).into(),
            reasoning: None,
            tool_calls: Vec::new(),
        };
        for message in [&short, &long, &run] {
            writer
                .write_redacted(&MessageRecord { turn: 1, message }, "message", &redactor())
                .unwrap();
        }
        let text = std::fs::read_to_string(writer.path()).unwrap();
        assert!(!text.contains(SECRET));
        assert_eq!(
            text.matches(crate::redact::REDACTED).count(),
            4,
            "1 + 2 + 1"
        );
        let saved = saved_messages(writer.path());
        assert_eq!(saved.len(), 3);
        let Message::Tool { content, .. } = &saved[1] else {
            panic!("{:?}", saved[1]);
        };
        assert_eq!(
            *content,
            long_output(3 * PIECE, true).replace(SECRET, crate::redact::REDACTED)
        );
    }

    #[test]
    fn the_search_for_secrets_finds_one_cut_between_two_writes() {
        let found = |writes: &[&[u8]]| {
            let redactor = redactor();
            let mut scan = SecretScan::new(&redactor);
            for w in writes {
                scan.write_all(w).unwrap();
            }
            scan.found()
        };
        let s = SECRET.as_bytes();
        let fill = vec![b'a'; PIECE - 5];
        let big = vec![b'b'; 2 * PIECE];
        // Cut where the held part is searched and dropped.
        let first: Vec<u8> = [&fill[..], &s[..5]].concat();
        assert!(found(&[&first, &s[5..]]));
        // Cut between small writes and a long run.
        let run: Vec<u8> = [&s[3..], &big[..]].concat();
        assert!(found(&[b"x", &s[..3], &run]));
        // Cut between a long run and what follows.
        let run: Vec<u8> = [&big[..], &s[..7]].concat();
        assert!(found(&[&run, &s[7..], b"z"]));
        // Whole inside a long run.
        let run: Vec<u8> = [&big[..], s, &big[..]].concat();
        assert!(found(&[&run]));
        // Not there: pieces of it apart are not it.
        let apart: Vec<u8> = [&s[..5], &fill[..], &s[5..]].concat();
        assert!(!found(&[&apart, &big, &s[..3]]));
    }

    #[test]
    fn a_streamed_line_holds_at_most_one_piece() {
        let (_tmp, store) = temp_store();
        let writer = store.create(&test_header("/p", 1)).unwrap();
        let mut pieces = Piece::Streamed {
            file: &writer.file,
            buf: Vec::with_capacity(PIECE + 1),
            started: false,
        };
        pieces.write_all(&vec![b'x'; 10 * PIECE]).unwrap();
        for _ in 0..3 * PIECE / 100 {
            pieces.write_all(&[b'y'; 100]).unwrap();
        }
        pieces.end_line().unwrap();
        let Piece::Streamed { buf, started, .. } = &pieces else {
            unreachable!()
        };
        assert!(*started);
        assert!(buf.capacity() <= PIECE + 1, "{}", buf.capacity());
        let text = std::fs::read_to_string(writer.path()).unwrap();
        let last = text.lines().last().unwrap();
        assert_eq!(last.len(), 10 * PIECE + 3 * PIECE / 100 * 100);
    }
}
