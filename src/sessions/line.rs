//! One record line read the direct way. serde reads a type-tagged value (a record by
//! its `type`, a message by its `role`) by buffering the whole object first and reading
//! it again; the records a long session is made of (`message`, `usage`, `turn_end`) are
//! read here straight into their fields instead. Whatever this way does not accept
//! (a field missing or `null`, an unknown role, a record of another type) is left to
//! the tagged way, so the result, and every error, is the one serde gives.
//!
//! It knows the record shapes only; nothing of files or of what a record means.

use serde::Deserialize;

use super::record::Record;
use crate::llm::{Message, Reasoning, ToolCall};
use crate::protocol::{SharedText, TurnOutcome, Usage};

/// How a `message` record's line starts (the writer puts `type` first).
pub(super) const MESSAGE_PREFIX: &[u8] = br#"{"type":"message""#;
const USAGE_PREFIX: &[u8] = br#"{"type":"usage""#;
const TURN_END_PREFIX: &[u8] = br#"{"type":"turn_end""#;

/// A message's role, as written.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// Every field any message has; which are required depends on the role.
#[derive(Deserialize)]
struct FlatMessage {
    role: Role,
    content: Option<String>,
    #[serde(default)]
    reasoning: Option<Reasoning>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    tool_call_id: Option<String>,
    #[serde(default)]
    images: Vec<crate::images::ImageRef>,
}

impl FlatMessage {
    /// The message, when its role's required fields are there (`None` sends the line
    /// the tagged way, which says what is wrong).
    fn into_message(self) -> Option<Message> {
        let content = self.content?;
        Some(match self.role {
            Role::System => Message::System { content },
            Role::User => Message::User {
                content,
                images: self.images,
            },
            Role::Assistant => Message::Assistant {
                content: SharedText::from(content),
                reasoning: self.reasoning,
                tool_calls: self.tool_calls,
            },
            Role::Tool => Message::Tool {
                tool_call_id: self.tool_call_id?,
                content,
            },
        })
    }
}

#[derive(Deserialize)]
struct MessageFields {
    turn: u64,
    message: FlatMessage,
}

#[derive(Deserialize)]
struct UsageFields {
    turn: u64,
    usage: Usage,
    session: Usage,
}

#[derive(Deserialize)]
struct TurnEndFields {
    turn: u64,
    outcome: TurnOutcome,
}

/// One record line: the common ones straight into their fields, any other (or one that
/// way refuses) the tagged way.
pub(super) fn parse_record(line: &[u8]) -> serde_json::Result<Record> {
    if let Some(record) = direct(line) {
        return Ok(record);
    }
    serde_json::from_slice::<Record>(line)
}

/// Whether `line` is a record of the type `prefix` names (not one whose type only
/// starts the same way).
fn is(line: &[u8], prefix: &[u8]) -> bool {
    line.starts_with(prefix) && line.get(prefix.len()) == Some(&b',')
}

fn direct(line: &[u8]) -> Option<Record> {
    if is(line, MESSAGE_PREFIX) {
        let MessageFields { turn, message } = serde_json::from_slice(line).ok()?;
        return Some(Record::Message {
            turn,
            message: message.into_message()?,
        });
    }
    if is(line, USAGE_PREFIX) {
        let UsageFields {
            turn,
            usage,
            session,
        } = serde_json::from_slice(line).ok()?;
        return Some(Record::Usage {
            turn,
            usage,
            session,
        });
    }
    if is(line, TURN_END_PREFIX) {
        let TurnEndFields { turn, outcome } = serde_json::from_slice(line).ok()?;
        return Some(Record::TurnEnd { turn, outcome });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of every shape the direct way meets: each must read exactly as the tagged
    /// way reads it, error or not.
    const LINES: &[&str] = &[
        r#"{"type":"message","turn":1,"message":{"role":"user","content":"fix \"it\"\n"}}"#,
        r#"{"type":"message","turn":1,"message":{"role":"system","content":"be brief"}}"#,
        r#"{"type":"message","turn":2,"message":{"role":"assistant","content":"Running.","reasoning":"why","tool_calls":[{"id":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"}]}}"#,
        r#"{"type":"message","turn":2,"message":{"role":"assistant","content":""}}"#,
        r#"{"type":"message","turn":2,"message":{"role":"assistant","content":"x","reasoning":null}}"#,
        r#"{"type":"message","turn":2,"message":{"role":"tool","tool_call_id":"c1","content":"out\u0001"}}"#,
        r#"{"message":{"content":"late role","role":"user"},"turn":3,"type":"message"}"#,
        r#"{"type":"message","turn":3,"message":{"role":"user","content":"x","tool_calls":5}}"#,
        r#"{"type":"message","turn":3,"message":{"role":"user","content":"x","extra":[1,2]}}"#,
        r#"{"type":"message","turn":3,"message":{"role":"tool","content":"no id"}}"#,
        r#"{"type":"message","turn":3,"message":{"role":"tool","tool_call_id":null,"content":"x"}}"#,
        r#"{"type":"message","turn":3,"message":{"role":"assistant","content":null}}"#,
        r#"{"type":"message","turn":3,"message":{"role":"assistant"}}"#,
        r#"{"type":"message","turn":3,"message":{"role":"assistant","content":"x","tool_calls":null}}"#,
        r#"{"type":"message","turn":3,"message":{"role":"robot","content":"x"}}"#,
        r#"{"type":"message","turn":3,"message":{"role":"user","content":"a","content":"b"}}"#,
        r#"{"type":"message","turn":"3","message":{"role":"user","content":"x"}}"#,
        r#"{"type":"message","message":{"role":"user","content":"x"}}"#,
        r#"{"type":"messages","turn":3,"message":{"role":"user","content":"x"}}"#,
        r#"{"type":"usage","turn":1,"usage":{"input_tokens":5,"output_tokens":2,"cached_input_tokens":0,"estimated":false},"session":{"input_tokens":5,"output_tokens":2,"cached_input_tokens":0,"estimated":true,"cost_usd":0.5}}"#,
        r#"{"type":"usage","turn":1,"usage":{"input_tokens":5},"session":{}}"#,
        r#"{"type":"usage","turn":1,"usage":{"input_tokens":-5},"session":{}}"#,
        r#"{"type":"usage","turn":1,"usage":{}}"#,
        r#"{"type":"turn_end","turn":4,"outcome":{"status":"completed"}}"#,
        r#"{"type":"turn_end","turn":4,"outcome":{"status":"failed","kind":"rate_limit","message":"slow down"}}"#,
        r#"{"type":"turn_end","turn":4,"outcome":{"status":"exploded"}}"#,
        r#"{"type":"turn_end","turn":4}"#,
        r#"{"type":"turn_endless","turn":4,"outcome":{"status":"completed"}}"#,
        r#"{"type":"message","turn":1,"message":{"role":"user","content":"x"}"#,
        r#"{"type":"cleared"}"#,
        r#"{"type":"message","turn":2,"message":{"role":"user","content":"see","images":[{"sha256":"ab","type":"png","size":3,"name":"a.png"}]}}"#,
        r#"{"type":"message","turn":2,"message":{"role":"user","content":"see","images":[{"sha256":"ab","type":"tiff","size":3,"name":"a.png"}]}}"#,
    ];

    #[test]
    fn every_line_reads_as_the_tagged_way_reads_it() {
        let mut direct_hits = 0;
        for line in LINES {
            let tagged = serde_json::from_slice::<Record>(line.as_bytes());
            let read = parse_record(line.as_bytes());
            match (&tagged, &read) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{line}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{line}"),
                _ => panic!("{line}: tagged {tagged:?}, read {read:?}"),
            }
            direct_hits += usize::from(direct(line.as_bytes()).is_some());
        }
        // The direct way really took the well-formed ones.
        assert!(direct_hits >= 10, "{direct_hits}");
    }
}
