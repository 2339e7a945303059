//! Reading session files: [`read`] streams every record to a callback, line by line,
//! skipping (with a warning naming the file and line) what cannot be used: a damaged
//! line, a record of a type from a newer harness9, the torn last line a crash leaves.
//! [`read_for_resume`] reads only what a resumed session sends: it finds the last
//! compaction or clear from the end of the file and passes over the `message` lines
//! before it without copying or parsing them. [`summary`] is the cheap pass for
//! listings: it parses the header and only the few lines it needs, recognising the
//! others by their `{"type":"…"` prefix.
//!
//! It must not know where files live or what the agent does with a record.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use super::error::{IoAction, SessionError};
use super::line::{MESSAGE_PREFIX, parse_record};
use super::record::{Header, Record, SCHEMA_VERSION, SessionId};
use crate::llm::Message;

/// How the lines of the records that replace everything said before them start.
const RESET_PREFIXES: [&[u8]; 2] = [br#"{"type":"compacted""#, br#"{"type":"cleared""#];

/// What [`read`] found besides the records it passed on.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadReport {
    /// The first line.
    pub header: Header,
    /// How many records were passed to the callback (the header is not one of them).
    pub records: usize,
    /// Lines skipped and why, one sentence each, naming the file.
    pub warnings: Vec<String>,
}

/// A session as a listing shows it, read without parsing every message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    /// The session's id.
    pub id: SessionId,
    /// Its file.
    pub path: PathBuf,
    /// The project it is filed under.
    pub project: PathBuf,
    /// The working directory it was created in.
    pub cwd: PathBuf,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// Last write, milliseconds since the Unix epoch.
    pub modified_ms: u64,
    /// The first thing the user asked, on one line of at most 80 characters.
    pub first_prompt: Option<String>,
    /// Turns that ended (completed, failed or interrupted).
    pub turns: u64,
    /// The model in use at the end: the header's, or the last switch's.
    pub model: String,
    /// File size in bytes.
    pub bytes: u64,
}

/// Longest first prompt a summary keeps, in characters.
const PROMPT_CHARS: usize = 80;

/// How many bytes are read at a time.
const READ_BUFFER: usize = 64 * 1024;

/// How a line ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// With `\n`.
    Newline,
    /// At the end of the file without one: a torn write, unless it parses.
    Eof,
}

/// One line of a file, without its line ending.
struct Line<'a> {
    /// 1-based.
    number: usize,
    /// Where it starts, in bytes from the start of the file.
    start: u64,
    bytes: &'a [u8],
    ending: Ending,
}

/// The lines of a file, one buffer reused. A line that lies whole in the reader's
/// buffer is lent from there (and consumed when the next is asked for); only a longer
/// one is copied into `buf`.
struct Lines {
    reader: BufReader<File>,
    buf: Vec<u8>,
    /// Bytes of the reader's buffer lent as the last line, consumed before the next.
    lent: usize,
    number: usize,
    /// Where the next line starts, in bytes from the start of the file.
    offset: u64,
    path: PathBuf,
}

impl Lines {
    fn open(path: &Path) -> Result<Lines, SessionError> {
        let file = File::open(path).map_err(|e| SessionError::io(IoAction::Read, path, e))?;
        Ok(Lines {
            reader: BufReader::with_capacity(READ_BUFFER, file),
            buf: Vec::new(),
            lent: 0,
            number: 0,
            offset: 0,
            path: path.to_path_buf(),
        })
    }

    /// Passes over the next line without copying it when `skip`, given where it starts
    /// and its first bytes (as many as the buffer holds: a line starting at the very
    /// end of it may show fewer than a record prefix, and is then left for
    /// [`Lines::next_line`]), says so; returns whether it did. At the end of the file
    /// nothing is skipped.
    fn skip_line_if(&mut self, skip: impl Fn(u64, &[u8]) -> bool) -> Result<bool, SessionError> {
        self.give_back();
        let path = &self.path;
        let available = self
            .reader
            .fill_buf()
            .map_err(|e| SessionError::io(IoAction::Read, path, e))?;
        if available.is_empty() || !skip(self.offset, available) {
            return Ok(false);
        }
        let n = self
            .reader
            .skip_until(b'\n')
            .map_err(|e| SessionError::io(IoAction::Read, path, e))?;
        self.number += 1;
        self.offset += n as u64;
        Ok(true)
    }

    /// Consumes the line lent last.
    fn give_back(&mut self) {
        self.reader.consume(std::mem::take(&mut self.lent));
    }

    /// The next line, if any.
    fn next_line(&mut self) -> Result<Option<Line<'_>>, SessionError> {
        self.give_back();
        let newline = self
            .reader
            .fill_buf()
            .map(|available| memchr::memchr(b'\n', available))
            .map_err(|e| SessionError::io(IoAction::Read, &self.path, e))?;
        if let Some(at) = newline {
            self.lent = at + 1;
            self.number += 1;
            let start = self.offset;
            self.offset += self.lent as u64;
            let mut bytes = &self.reader.buffer()[..at];
            if let Some(rest) = bytes.strip_suffix(b"\r") {
                bytes = rest;
            }
            return Ok(Some(Line {
                number: self.number,
                start,
                bytes,
                ending: Ending::Newline,
            }));
        }
        self.buf.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| SessionError::io(IoAction::Read, &self.path, e))?;
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        let start = self.offset;
        self.offset += n as u64;
        let ending = if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
            Ending::Newline
        } else {
            Ending::Eof
        };
        Ok(Some(Line {
            number: self.number,
            start,
            bytes: &self.buf,
            ending,
        }))
    }
}

/// The header from the first line of `line`'s file.
fn parse_header(path: &Path, line: Option<&[u8]>) -> Result<Header, SessionError> {
    let not_a_session = || SessionError::NotASession {
        path: path.to_path_buf(),
    };
    let line = line.ok_or_else(not_a_session)?;
    match serde_json::from_slice::<Record>(line) {
        Ok(Record::Header(header)) => Ok(header),
        Ok(_) => Err(not_a_session()),
        Err(e) if line.starts_with(br#"{"type":"header""#) => Err(SessionError::BadHeader {
            path: path.to_path_buf(),
            reason: reason(&e),
        }),
        Err(_) => Err(not_a_session()),
    }
}

/// The header of a session file (its first line only).
pub fn read_header(path: &Path) -> Result<Header, SessionError> {
    let mut lines = Lines::open(path)?;
    let first = lines.next_line()?.map(|line| line.bytes);
    parse_header(path, first)
}

/// A parser error without serde_json's "at line 1 column N" (every record is line 1 of
/// its own parse), with the column kept.
fn reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&position) {
        Some(message) => format!("{message} (column {})", e.column()),
        None => text,
    }
}

/// Just the `type` of a line that did not parse as a [`Record`].
#[derive(Deserialize)]
struct TypeOnly {
    #[serde(rename = "type")]
    kind: String,
}

/// Reads every record of a session file after its header, in order, and passes each to
/// `on_record`. Lines that cannot be used are skipped with a warning in the report; the
/// file must start with a header ([`SessionError::NotASession`] otherwise).
pub fn read(path: &Path, mut on_record: impl FnMut(Record)) -> Result<ReadReport, SessionError> {
    read_fallible(path, |record| {
        on_record(record);
        Ok(())
    })
}

/// [`read`] for resuming: `message` records before the last `compacted` or `cleared`
/// record are not even parsed (that record replaces everything they said), so a long
/// session resumes in time proportional to what it will send, not to its whole history.
/// The last such record is found from the end of the file (a torn one at the very end
/// does not count: it is skipped, so it cannot replace anything), and the messages
/// before it are passed over without being copied. Every other record is passed on in
/// order, as by [`read`].
pub fn read_for_resume(
    path: &Path,
    mut on_record: impl FnMut(Record),
) -> Result<ReadReport, SessionError> {
    let reset = last_reset(path)?;
    read_filtered(
        path,
        |offset, start| offset < reset && start.starts_with(MESSAGE_PREFIX),
        |record| {
            on_record(record);
            Ok(())
        },
    )
}

/// Where the last complete `compacted` or `cleared` line of a file starts (0 when there
/// is none), found by reading blocks from the end and looking at the start of each line
/// in turn: a raw newline only ever ends a record (JSON escapes the ones inside
/// strings), so every line start follows one.
fn last_reset(path: &Path) -> Result<u64, SessionError> {
    let io = |e| SessionError::io(IoAction::Read, path, e);
    let mut file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let prefix_len = RESET_PREFIXES.iter().map(|p| p.len()).max().unwrap_or(0);
    // The last newline of the file: a line starting after it is torn (or empty).
    let mut last_newline: Option<u64> = None;
    // The first bytes of the block after the current one, where a line's prefix may end.
    let mut next_start: Vec<u8> = Vec::with_capacity(prefix_len);
    let mut block = Vec::with_capacity(READ_BUFFER + prefix_len);
    let mut end = len;
    while end > 0 {
        let start = end.saturating_sub(READ_BUFFER as u64);
        // At most READ_BUFFER: the difference of two offsets READ_BUFFER apart.
        let size = usize::try_from(end - start).unwrap_or(READ_BUFFER);
        block.clear();
        block.resize(size, 0);
        file.seek(SeekFrom::Start(start)).map_err(io)?;
        file.read_exact(&mut block).map_err(io)?;
        block.extend_from_slice(&next_start);
        for at in memchr::memrchr_iter(b'\n', &block[..size]) {
            let newline = start + at as u64;
            let Some(last) = last_newline else {
                last_newline = Some(newline);
                continue;
            };
            let line = &block[at + 1..];
            if newline < last && RESET_PREFIXES.iter().any(|p| line.starts_with(p)) {
                return Ok(newline + 1);
            }
        }
        next_start.clear();
        next_start.extend_from_slice(&block[..size.min(prefix_len)]);
        end = start;
    }
    Ok(0)
}

/// [`read`] with a callback that can fail; its first error ends the reading.
pub(crate) fn read_fallible(
    path: &Path,
    on_record: impl FnMut(Record) -> Result<(), SessionError>,
) -> Result<ReadReport, SessionError> {
    read_filtered(path, |_, _| false, on_record)
}

/// Reads the records of the lines `skip` (given where a line starts and its first
/// bytes) does not pass over.
fn read_filtered(
    path: &Path,
    skip: impl Fn(u64, &[u8]) -> bool,
    mut on_record: impl FnMut(Record) -> Result<(), SessionError>,
) -> Result<ReadReport, SessionError> {
    let mut lines = Lines::open(path)?;
    let first = lines.next_line()?.map(|line| line.bytes);
    let header = parse_header(path, first)?;
    let shown = path.display();
    let mut warnings = Vec::new();
    if header.schema > SCHEMA_VERSION {
        warnings.push(format!(
            "{shown}: written by a newer harness9 (record format {}, this one reads {}); \
             records it does not know are skipped",
            header.schema, SCHEMA_VERSION
        ));
    }
    // Unknown types: the line each was first seen on and how many there were.
    let mut unknown: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut records = 0;
    loop {
        if lines.skip_line_if(&skip)? {
            continue;
        }
        let Some(Line {
            number,
            start,
            bytes: line,
            ending,
        }) = lines.next_line()?
        else {
            break;
        };
        if line.iter().all(u8::is_ascii_whitespace) || skip(start, line) {
            continue;
        }
        let error = match parse_record(line) {
            Ok(Record::Header(_)) => {
                warnings.push(format!("{shown}:{number}: skipped a second session header"));
                continue;
            }
            Ok(record) => {
                on_record(record)?;
                records += 1;
                continue;
            }
            Err(e) => e,
        };
        if ending == Ending::Eof {
            warnings.push(format!(
                "{shown}: the last record was cut off ({} bytes), probably by a crash; \
                 it was skipped",
                line.len()
            ));
            continue;
        }
        match serde_json::from_slice::<TypeOnly>(line) {
            Ok(TypeOnly { kind }) if !Record::TYPES.contains(&kind.as_str()) => {
                unknown.entry(kind).or_insert((number, 0)).1 += 1;
            }
            _ => warnings.push(format!(
                "{shown}:{number}: skipped a damaged record: {}",
                reason(&error)
            )),
        }
    }
    for (kind, (first, count)) in unknown {
        warnings.push(format!(
            "{shown}: skipped {count} record(s) of unknown type {kind:?} (first on line \
             {first}), probably written by a newer harness9"
        ));
    }
    Ok(ReadReport {
        header,
        records,
        warnings,
    })
}

/// The cheap summary of a session file for listings: the header, the first user prompt,
/// the number of ended turns (counted by line prefix, without parsing), the last model,
/// the size and the modification time.
pub fn summary(path: &Path) -> Result<SessionSummary, SessionError> {
    let mut lines = Lines::open(path)?;
    let metadata = lines
        .reader
        .get_ref()
        .metadata()
        .map_err(|e| SessionError::io(IoAction::Read, path, e))?;
    let first = lines.next_line()?.map(|line| line.bytes);
    let header = parse_header(path, first)?;
    let mut first_prompt = None;
    let mut turns = 0;
    let mut model = header.model.clone();
    while let Some(Line { bytes: line, .. }) = lines.next_line()? {
        if line.starts_with(br#"{"type":"turn_end""#) {
            // A torn last line does not count.
            turns += u64::from(line.ends_with(b"}"));
        } else if first_prompt.is_none() && line.starts_with(br#"{"type":"prompt""#) {
            // What the user typed, where the message it became differs (a skill command's
            // expanded body, mentions attached, notes before it).
            if let Ok(Record::Prompt { text, .. }) = serde_json::from_slice(line) {
                first_prompt = Some(one_line(&text, PROMPT_CHARS));
            }
        } else if first_prompt.is_none() && line.starts_with(br#"{"type":"message""#) {
            if let Ok(Record::Message {
                message: Message::User { content, .. },
                ..
            }) = serde_json::from_slice(line)
            {
                first_prompt = Some(one_line(&content, PROMPT_CHARS));
            }
        } else if line.starts_with(br#"{"type":"model_changed""#)
            && let Ok(Record::ModelChanged { model: changed }) = serde_json::from_slice(line)
        {
            model = changed;
        }
    }
    let modified_ms = metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    Ok(SessionSummary {
        id: header.id,
        path: path.to_path_buf(),
        project: header.project,
        cwd: header.cwd,
        created_ms: header.created_ms,
        modified_ms,
        first_prompt,
        turns,
        model,
        bytes: metadata.len(),
    })
}

/// `text` on one line (runs of whitespace become one space), at most `max` characters
/// (the last one `…` when shortened).
pub fn one_line(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let mut short: String = joined.chars().take(max.saturating_sub(1)).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::TurnOutcome;
    use crate::sessions::{SessionStore, SessionWriter, temp_store, test_header};

    fn collect(path: &Path) -> (Vec<Record>, ReadReport) {
        let mut records = Vec::new();
        let report = read(path, |r| records.push(r)).unwrap();
        (records, report)
    }

    /// Appends `bytes` to the file as they are, as a crash or another writer might.
    fn append_raw(path: &Path, bytes: &[u8]) {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        std::io::Write::write_all(&mut f, bytes).unwrap();
    }

    /// A new session in `store` whose first record is the user's `text`; its path.
    fn started(store: &SessionStore, text: &str) -> (SessionWriter, PathBuf) {
        let writer = store.create(&test_header("/p", 1)).unwrap();
        writer.append(&user(1, text)).unwrap();
        let path = writer.path().to_path_buf();
        (writer, path)
    }

    fn user(turn: u64, text: &str) -> Record {
        Record::Message {
            turn,
            message: Message::User {
                images: Vec::new(),
                content: text.into(),
            },
        }
    }

    #[test]
    fn resuming_skips_only_the_messages_a_compaction_replaced() {
        let (_tmp, store) = temp_store();
        let writer = store.create(&test_header("/work/p", 1_000)).unwrap();
        let compacted = Record::Compacted {
            turn: 2,
            trigger: crate::protocol::CompactionTrigger::Threshold,
            tokens_before: 10,
            tokens_after: 2,
            summarized_messages: 1,
            user_messages: vec!["one".into()],
            messages: vec![Message::User {
                images: Vec::new(),
                content: "summary".into(),
            }],
        };
        let written = vec![
            user(1, "one"),
            Record::SkillLoaded { name: "s".into() },
            Record::TurnEnd {
                turn: 1,
                outcome: TurnOutcome::Completed,
            },
            compacted.clone(),
            user(2, "two"),
        ];
        for r in &written {
            writer.append(r).unwrap();
        }
        let mut records = Vec::new();
        read_for_resume(writer.path(), |r| records.push(r)).unwrap();
        assert_eq!(
            records,
            vec![
                written[1].clone(),
                written[2].clone(),
                compacted,
                user(2, "two")
            ]
        );
    }

    fn compacted(turn: u64) -> Record {
        Record::Compacted {
            turn,
            trigger: crate::protocol::CompactionTrigger::Threshold,
            tokens_before: 10,
            tokens_after: 2,
            summarized_messages: 1,
            user_messages: vec![format!("kept {turn}")],
            messages: vec![Message::User {
                images: Vec::new(),
                content: format!("summary {turn}"),
            }],
        }
    }

    /// What resuming must pass on: every record but the messages before the last
    /// compaction or clear (read the plain way).
    fn expected_for_resume(path: &Path) -> Vec<Record> {
        let (all, _) = collect(path);
        let last = all
            .iter()
            .rposition(|r| matches!(r, Record::Compacted { .. } | Record::Cleared));
        all.into_iter()
            .enumerate()
            .filter(|(i, r)| {
                !(last.is_some_and(|last| *i < last) && matches!(r, Record::Message { .. }))
            })
            .map(|(_, r)| r)
            .collect()
    }

    #[test]
    fn resuming_finds_the_last_compaction_wherever_the_blocks_fall() {
        let (_tmp, store) = temp_store();
        // A cheap generator: sizes and kinds vary so that record starts fall on every
        // side of the 64 KiB blocks read from the end.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for round in 0..40 {
            let writer = store.create(&test_header("/p", 1_000 + round)).unwrap();
            let records = 5 + next(60);
            for turn in 1..=records {
                let record = match next(10) {
                    0 => compacted(turn),
                    1 => Record::Cleared,
                    2 => Record::SkillLoaded {
                        name: format!("s{turn}"),
                    },
                    _ => user(turn, &"x".repeat(usize::try_from(next(40_000)).unwrap())),
                };
                writer.append(&record).unwrap();
            }
            let mut got = Vec::new();
            read_for_resume(writer.path(), |r| got.push(r)).unwrap();
            assert_eq!(got, expected_for_resume(writer.path()), "round {round}");
        }
    }

    #[test]
    fn a_torn_compaction_at_the_end_hides_no_message() {
        let (_tmp, store) = temp_store();
        let (writer, path) = started(&store, "first");
        writer.append(&compacted(1)).unwrap();
        writer.append(&user(2, "second")).unwrap();
        drop(writer);
        // A crash while the next compaction was being written.
        let line = serde_json::to_string(&compacted(2)).unwrap();
        append_raw(&path, &line.as_bytes()[..line.len() / 2]);
        let mut got = Vec::new();
        let report = read_for_resume(&path, |r| got.push(r)).unwrap();
        assert_eq!(got, vec![compacted(1), user(2, "second")]);
        assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
        assert!(
            report.warnings[0].contains("cut off"),
            "{:?}",
            report.warnings
        );
    }

    #[test]
    fn a_message_line_reads_the_same_by_the_shortcut_and_the_tagged_way() {
        let messages = vec![
            Message::System {
                content: "sys".into(),
            },
            Message::User {
                images: Vec::new(),
                content: "a \"quoted\"\nline é".into(),
            },
            Message::Assistant {
                content: "answer".into(),
                reasoning: Some("thought".into()),
                tool_calls: vec![crate::llm::ToolCall {
                    id: "c1".into(),
                    name: "bash".into(),
                    arguments: r#"{"command":"ls"}"#.into(),
                }],
            },
            Message::Assistant {
                content: Default::default(),
                reasoning: None,
                tool_calls: Vec::new(),
            },
            Message::Tool {
                tool_call_id: "c1".into(),
                content: "out\n".repeat(1000),
            },
        ];
        for message in messages {
            let record = Record::Message { turn: 7, message };
            let line = serde_json::to_vec(&record).unwrap();
            assert!(line.starts_with(MESSAGE_PREFIX));
            assert_eq!(parse_record(&line).unwrap(), record);
            assert_eq!(
                serde_json::from_slice::<Record>(&line).unwrap(),
                record,
                "the tagged way agrees"
            );
        }
        // Not written by harness9 but still a message: `type` later, a field more.
        let odd =
            br#"{"turn":3,"extra":1,"type":"message","message":{"role":"user","content":"hi"}}"#;
        assert_eq!(parse_record(odd).unwrap(), user(3, "hi"));
        let extra =
            br#"{"type":"message","turn":3,"extra":[1],"message":{"role":"user","content":"hi"}}"#;
        assert_eq!(parse_record(extra).unwrap(), user(3, "hi"));
        // What the shortcut refuses is refused the tagged way too, with its reason.
        let bad = br#"{"type":"message","turn":"x","message":{"role":"user","content":"hi"}}"#;
        assert!(parse_record(bad).is_err());
        assert!(serde_json::from_slice::<Record>(bad).is_err());
    }

    #[test]
    fn what_is_written_is_read_back_in_order() {
        let (_tmp, store) = temp_store();
        let header = test_header("/work/p", 1_000);
        let writer = store.create(&header).unwrap();
        let written = vec![
            Record::SystemPrompt {
                prompt: "be brief".into(),
            },
            user(1, "hello\nthere"),
            Record::TurnEnd {
                turn: 1,
                outcome: TurnOutcome::Completed,
            },
            Record::ModelChanged { model: "m2".into() },
            user(2, "again"),
            Record::TurnEnd {
                turn: 2,
                outcome: TurnOutcome::Interrupted,
            },
        ];
        for r in &written {
            writer.append(r).unwrap();
        }
        let (records, report) = collect(writer.path());
        assert_eq!(records, written);
        assert_eq!(report.header, header);
        assert_eq!(report.records, written.len());
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        let text = std::fs::read_to_string(writer.path()).unwrap();
        assert_eq!(text.lines().count(), written.len() + 1);
        assert!(text.ends_with('\n'));

        let s = summary(writer.path()).unwrap();
        assert_eq!(s.id, header.id);
        assert_eq!(s.first_prompt.as_deref(), Some("hello there"));
        assert_eq!(s.turns, 2);
        assert_eq!(s.model, "m2");
        assert_eq!(s.bytes, text.len() as u64);
        assert_eq!(s.project, PathBuf::from("/work/p"));
        assert!(s.modified_ms > 0);
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_the_next_append_starts_a_fresh_line() {
        let (_tmp, store) = temp_store();
        let (writer, path) = started(&store, "first");
        drop(writer);
        // A crash in the middle of writing a record.
        let torn = r#"{"type":"message","turn":1,"message":{"role":"assis"#;
        append_raw(&path, torn.as_bytes());
        let (records, report) = collect(&path);
        assert_eq!(records, vec![user(1, "first")]);
        assert_eq!(
            report.warnings,
            vec![format!(
                "{}: the last record was cut off ({} bytes), probably by a crash; it was skipped",
                path.display(),
                torn.len()
            )]
        );
        // Resuming: the torn line is ended first, so the new record parses.
        let writer = store.open_append(&path).unwrap();
        writer.append(&user(2, "second")).unwrap();
        let (records, report) = collect(&path);
        assert_eq!(records, vec![user(1, "first"), user(2, "second")]);
        assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
        assert!(
            report.warnings[0].starts_with(&format!(
                "{}:3: skipped a damaged record: EOF while parsing",
                path.display()
            )),
            "{:?}",
            report.warnings
        );
        // A file that ends cleanly gets no extra blank line (once its writer is gone:
        // one writer at a time).
        drop(writer);
        let before = std::fs::metadata(&path).unwrap().len();
        drop(store.open_append(&path).unwrap());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), before);
    }

    #[test]
    fn a_damaged_middle_line_and_unknown_types_are_skipped_with_warnings() {
        let (_tmp, store) = temp_store();
        let (writer, path) = started(&store, "a");
        append_raw(
            &path,
            b"not json at all\n{\"type\":\"hologram\",\"x\":1}\n{\"type\":\"message\",\"turn\":\"one\"}\n\
              {\"type\":\"hologram\"}\n\n{\"type\":\"future\"}\n",
        );
        writer.append(&user(2, "b")).unwrap();
        let (records, report) = collect(&path);
        assert_eq!(records, vec![user(1, "a"), user(2, "b")]);
        let p = path.display();
        assert_eq!(report.warnings.len(), 4, "{:?}", report.warnings);
        assert_eq!(
            report.warnings[0],
            format!("{p}:3: skipped a damaged record: expected ident (column 2)")
        );
        assert!(
            report.warnings[1].starts_with(&format!("{p}:5: skipped a damaged record: ")),
            "{:?}",
            report.warnings
        );
        assert_eq!(
            report.warnings[2],
            format!(
                "{p}: skipped 1 record(s) of unknown type \"future\" (first on line 8), \
                 probably written by a newer harness9"
            )
        );
        assert_eq!(
            report.warnings[3],
            format!(
                "{p}: skipped 2 record(s) of unknown type \"hologram\" (first on line 4), \
                 probably written by a newer harness9"
            )
        );
    }

    #[test]
    fn a_file_without_a_header_is_not_a_session() {
        let tmp = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("empty.jsonl", ""),
            ("notes.jsonl", "hello\n"),
            ("msg.jsonl", "{\"type\":\"cleared\"}\n"),
        ] {
            let path = tmp.path().join(name);
            std::fs::write(&path, text).unwrap();
            let err = read(&path, |_| {}).unwrap_err();
            assert!(
                matches!(&err, SessionError::NotASession { path: p } if *p == path),
                "{err}"
            );
            assert!(err.to_string().contains("is not a harness9 session"));
            assert!(summary(&path).is_err());
        }
        let path = tmp.path().join("bad-header.jsonl");
        std::fs::write(&path, "{\"type\":\"header\",\"schema\":1}\n").unwrap();
        let err = read(&path, |_| {}).unwrap_err().to_string();
        assert!(
            err.contains("header of") && err.contains("missing field"),
            "{err}"
        );
    }

    #[test]
    fn one_line_collapses_and_shortens() {
        assert_eq!(one_line("  a \n\t b  ", 80), "a b");
        assert_eq!(one_line(&"é".repeat(100), 80).chars().count(), 80);
        assert!(one_line(&"x".repeat(100), 80).ends_with('…'));
    }
}
