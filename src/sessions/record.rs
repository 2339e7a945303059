//! The records of a session file: one JSON object per line, `type` first. This is the
//! on-disk contract (docs/SESSIONS.md); every change to it is a schema change.
//!
//! It owns the record shapes, the session id and the header. It must not know where
//! files live, how they are written, or what the agent does with a replayed record.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::llm::Message;
use crate::protocol::{CompactionTrigger, Effort, InstructionFileInfo, TurnOutcome, Usage};

/// Version of the record format written in every header.
pub const SCHEMA_VERSION: u32 = 1;

/// A session's id: `YYYYMMDD-HHMMSS-xxxxxx` (UTC time of creation, then six hex digits),
/// so that ids sort by time and a short prefix is easy to type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(String);

impl SessionId {
    /// A new id for a session created now.
    pub fn generate() -> SessionId {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        // Six hex digits that differ between two sessions started in the same second:
        // the sub-second time and the process id, mixed.
        let mut x = u64::from(now.subsec_nanos()) ^ (u64::from(std::process::id()) << 20);
        x ^= x >> 17;
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        x ^= x >> 29;
        SessionId(format!(
            "{}-{:06x}",
            compact_utc(now.as_secs()),
            x & 0xff_ffff
        ))
    }

    /// Parses an id read from a file name or typed by a user: ASCII letters, digits
    /// and `-` only (so an id can never name a path outside the sessions folder).
    pub fn parse(text: &str) -> Option<SessionId> {
        let ok = !text.is_empty()
            && text.len() <= 64
            && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        ok.then(|| SessionId(text.to_string()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `YYYYMMDD-HHMMSS` for seconds since the Unix epoch (UTC).
pub fn compact_utc(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

/// `YYYY-MM-DD HH:MM` (UTC) for milliseconds since the Unix epoch, for listings.
pub fn display_utc(ms: u64) -> String {
    let (y, mo, d, h, mi, _) = civil(ms / 1000);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}")
}

/// Year, month, day, hour, minute, second of a Unix time (UTC), by the civil-from-days
/// algorithm (proleptic Gregorian calendar).
fn civil(secs: u64) -> (u64, u64, u64, u64, u64, u64) {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The host (and port) of an endpoint URL, for [`Header::endpoint_host`]: the scheme,
/// credentials (`user:key@`), path, query and fragment are left out, so nothing secret
/// reaches a session file.
pub fn endpoint_host(base_url: &str) -> String {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
        .to_string()
}

/// The first line of every session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema: u32,
    /// The session's id (also the file name).
    pub id: SessionId,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// The working directory of the run that created it.
    pub cwd: PathBuf,
    /// The project it is filed under: the canonical git root, else `cwd`.
    pub project: PathBuf,
    /// Model id at creation.
    pub model: String,
    /// The endpoint's host (and port); never the URL's credentials, path or query.
    pub endpoint_host: String,
    /// The harness9 version that created it.
    pub version: String,
}

/// A `message` record that borrows its message, so that a long answer is written
/// without being copied first; it serializes exactly as [`Record::Message`].
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename = "message")]
pub struct MessageRecord<'a> {
    /// The turn it belongs to.
    pub turn: u64,
    /// The message.
    pub message: &'a Message,
}

/// What a [`Record::Note`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteKind {
    /// The user ran a shell command (`!cmd`); the note holds its output.
    Shell,
    /// `/undo` put files back.
    Undo,
    /// A rewind put files back, or could not put all of them back.
    Rewind,
    /// A hook's context: UserPromptSubmit's with the prompt, SessionStart's (its stdout,
    /// its `additionalContext`) with the next message.
    Hook,
}

/// One line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// First line.
    Header(Header),
    /// The system prompt sent from here on: written when the file is created and when
    /// a resumed session's rebuilt prompt differs from the last one saved.
    SystemPrompt {
        /// The prompt.
        prompt: String,
    },
    /// A message of the conversation, as sent to the model (or as the model answered).
    Message {
        /// The turn it belongs to (1-based, counting across resumes).
        turn: u64,
        /// The message.
        message: Message,
    },
    /// A turn ended. A failed turn's messages are left out of what is sent next.
    TurnEnd {
        /// The turn.
        turn: u64,
        /// How it ended.
        outcome: TurnOutcome,
    },
    /// Token counts after a model request of the main conversation.
    Usage {
        /// The turn.
        turn: u64,
        /// The request's usage.
        usage: Usage,
        /// The session's usage so far.
        session: Usage,
    },
    /// A skill was loaded (its instructions given to the model, its tools registered).
    SkillLoaded {
        /// The skill's name.
        name: String,
    },
    /// A skill was unloaded.
    SkillUnloaded {
        /// The skill's name.
        name: String,
    },
    /// What is sent was replaced by a summary. The records before it are kept; from
    /// here on the conversation sent is `messages` (after the system prompt) and what
    /// follows.
    Compacted {
        /// The turn during which it happened.
        turn: u64,
        /// Why.
        trigger: CompactionTrigger,
        /// Estimated tokens of the conversation before.
        tokens_before: u64,
        /// Estimated tokens after.
        tokens_after: u64,
        /// How many messages the summary replaced.
        summarized_messages: usize,
        /// The user's messages kept word for word (also inside the summary message);
        /// the next compaction starts from them.
        #[serde(default)]
        user_messages: Vec<String>,
        /// The conversation sent from now on, system prompt excluded.
        messages: Vec<Message>,
    },
    /// The model was switched.
    ModelChanged {
        /// The new model id.
        model: String,
    },
    /// The reasoning effort was set (`/effort`); a resumed session keeps it.
    EffortChanged {
        /// The level.
        effort: Effort,
    },
    /// The conversation was cleared (`/clear`): nothing before this is sent again.
    Cleared,
    /// What the user typed for a turn (the message sent may differ: mentions attached,
    /// notes before it, a skill's body in place of `/name`); the rewind picker lists it.
    Prompt {
        /// The turn it starts.
        turn: u64,
        /// The text as typed.
        text: String,
    },
    /// A note for the model, sent at the start of the user's next message: a command the
    /// user ran with `!`, an `/undo`, a rewind whose files could not all be put back. A
    /// `message` record of the user after it already carries it.
    Note {
        /// What the note is about.
        kind: NoteKind,
        /// The text the model gets.
        text: String,
    },
    /// The conversation was rewound to just before turn `turn` (Esc Esc): the messages
    /// of that turn and later ones are not sent again.
    Rewound {
        /// The first turn left out.
        turn: u64,
    },
    /// Instruction files of folders below the working folder were attached to a tool
    /// result: the last `bytes` bytes of the latest `message` of the result of
    /// `call_id` (just before this record). They are in force while that result still
    /// ends with them, and kept when it is elided.
    InstructionsAttached {
        /// The turn.
        turn: u64,
        /// The call whose result carries them.
        call_id: String,
        /// The files, outer first.
        files: Vec<InstructionFileInfo>,
        /// How many bytes at the end of the result they take.
        bytes: usize,
    },
    /// The model's plan as `update_plan` last set it (the last one is shown again on
    /// resume).
    Plan {
        /// The plan.
        #[serde(flatten)]
        plan: crate::protocol::PlanUpdate,
    },
    /// The session was resumed by a later run.
    Resumed {
        /// When, milliseconds since the Unix epoch.
        at_ms: u64,
        /// That run's working directory.
        cwd: PathBuf,
        /// That run's harness9 version.
        version: String,
    },
}

impl Record {
    /// Every `type` tag this version writes and reads, in declaration order.
    pub const TYPES: [&'static str; 17] = [
        "header",
        "system_prompt",
        "message",
        "turn_end",
        "usage",
        "skill_loaded",
        "skill_unloaded",
        "compacted",
        "model_changed",
        "effort_changed",
        "cleared",
        "prompt",
        "note",
        "rewound",
        "instructions_attached",
        "plan",
        "resumed",
    ];

    /// The record's `type` tag as written in the file.
    pub fn type_name(&self) -> &'static str {
        match self {
            Record::Header(_) => "header",
            Record::SystemPrompt { .. } => "system_prompt",
            Record::Message { .. } => "message",
            Record::TurnEnd { .. } => "turn_end",
            Record::Usage { .. } => "usage",
            Record::SkillLoaded { .. } => "skill_loaded",
            Record::SkillUnloaded { .. } => "skill_unloaded",
            Record::Compacted { .. } => "compacted",
            Record::ModelChanged { .. } => "model_changed",
            Record::EffortChanged { .. } => "effort_changed",
            Record::Cleared => "cleared",
            Record::Prompt { .. } => "prompt",
            Record::Note { .. } => "note",
            Record::Rewound { .. } => "rewound",
            Record::InstructionsAttached { .. } => "instructions_attached",
            Record::Plan { .. } => "plan",
            Record::Resumed { .. } => "resumed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;

    #[test]
    fn records_round_trip_with_type_first() {
        let records = vec![
            Record::Header(crate::sessions::test_header("/p", 1)),
            Record::Message {
                turn: 1,
                message: Message::Assistant {
                    content: Default::default(),
                    reasoning: None,
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "bash".into(),
                        arguments: "{}".into(),
                    }],
                },
            },
            Record::TurnEnd {
                turn: 1,
                outcome: TurnOutcome::Completed,
            },
            Record::Cleared,
        ];
        for record in records {
            let line = serde_json::to_string(&record).unwrap();
            assert!(line.starts_with(r#"{"type":"#), "{line}");
            assert!(!line.contains('\n'));
            let back: Record = serde_json::from_str(&line).unwrap();
            assert_eq!(back, record);
        }
    }

    #[test]
    fn type_names_are_the_serialized_tags_and_all_listed() {
        let every = [
            Record::Header(crate::sessions::test_header("/p", 1)),
            Record::SystemPrompt { prompt: "p".into() },
            Record::Message {
                turn: 1,
                message: Message::User {
                    images: Vec::new(),
                    content: "hi".into(),
                },
            },
            Record::TurnEnd {
                turn: 1,
                outcome: TurnOutcome::Completed,
            },
            Record::Usage {
                turn: 1,
                usage: Usage::default(),
                session: Usage::default(),
            },
            Record::SkillLoaded { name: "s".into() },
            Record::SkillUnloaded { name: "s".into() },
            Record::Compacted {
                user_messages: Vec::new(),
                turn: 1,
                trigger: CompactionTrigger::Manual,
                tokens_before: 2,
                tokens_after: 1,
                summarized_messages: 1,
                messages: Vec::new(),
            },
            Record::ModelChanged { model: "m".into() },
            Record::EffortChanged {
                effort: Effort::High,
            },
            Record::Cleared,
            Record::Prompt {
                turn: 1,
                text: "hi".into(),
            },
            Record::Note {
                kind: NoteKind::Shell,
                text: "ran".into(),
            },
            Record::Rewound { turn: 1 },
            Record::InstructionsAttached {
                turn: 1,
                call_id: "c1".into(),
                files: vec![InstructionFileInfo::new(
                    "/p/pkg/AGENTS.md".into(),
                    crate::protocol::InstructionOrigin::Nested,
                    10,
                    10,
                )],
                bytes: 60,
            },
            Record::Plan {
                plan: crate::protocol::PlanUpdate {
                    items: vec![crate::protocol::PlanStep {
                        step: "read".into(),
                        status: crate::protocol::StepStatus::InProgress,
                    }],
                    explanation: None,
                },
            },
            Record::Resumed {
                at_ms: 1,
                cwd: "/p".into(),
                version: "v".into(),
            },
        ];
        assert_eq!(every.len(), Record::TYPES.len());
        for (record, name) in every.iter().zip(Record::TYPES) {
            assert_eq!(record.type_name(), name);
            let line = serde_json::to_string(record).unwrap();
            assert!(line.starts_with(&format!(r#"{{"type":"{name}""#)), "{line}");
        }
    }

    #[test]
    fn the_endpoint_host_leaves_secrets_out() {
        assert_eq!(endpoint_host("https://api.openai.com/v1"), "api.openai.com");
        assert_eq!(
            endpoint_host("http://user:sk-secret@127.0.0.1:8080/v1?key=x#f"),
            "127.0.0.1:8080"
        );
        assert_eq!(endpoint_host("localhost:11434"), "localhost:11434");
        assert_eq!(endpoint_host(""), "");
    }

    #[test]
    fn a_borrowed_message_record_is_the_same_line() {
        let message = Message::User {
            images: Vec::new(),
            content: "hi".into(),
        };
        let owned = Record::Message {
            turn: 3,
            message: message.clone(),
        };
        let borrowed = MessageRecord {
            turn: 3,
            message: &message,
        };
        assert_eq!(
            serde_json::to_string(&borrowed).unwrap(),
            serde_json::to_string(&owned).unwrap()
        );
    }

    #[test]
    fn ids_are_time_ordered_and_safe() {
        let id = SessionId::generate();
        assert_eq!(id.as_str().len(), "20261123-173501-a3f9c2".len(), "{id}");
        assert!(SessionId::parse(id.as_str()).is_some());
        assert!(SessionId::parse("../x").is_none());
        assert!(SessionId::parse("").is_none());
        assert_eq!(compact_utc(0), "19700101-000000");
        // 2026-11-23 17:35:01 UTC.
        assert_eq!(compact_utc(1_795_455_301), "20261123-173501");
        assert_eq!(display_utc(1_795_455_301_000), "2026-11-23 17:35");
    }
}
