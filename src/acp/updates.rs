//! What the agent's [`Event`]s become for an ACP client: `session/update` notifications
//! for message and thought chunks and the plan (tool calls are `tool_calls.rs`'s), the kind an editor
//! shows a tool as, and the stop reason a `session/prompt` ends with.
//!
//! It translates one event at a time and keeps no state; it must not know the wire or
//! how the agent works inside.

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, SessionUpdate, StopReason, TextContent, ToolKind,
};

use crate::protocol::{ErrorKind, Event, TruncationReason, TurnOutcome};

/// The update an event shows the client, if any.
pub fn update_for(event: &Event) -> Option<SessionUpdate> {
    match event {
        Event::TextDelta { text } if !text.is_empty() => {
            Some(SessionUpdate::AgentMessageChunk(chunk(text)))
        }
        Event::ReasoningDelta { text } if !text.is_empty() => {
            Some(SessionUpdate::AgentThoughtChunk(chunk(text)))
        }
        Event::Plan { plan } => Some(super::plan::update(plan)),
        _ => None,
    }
}

/// The agent's message `text`, whole (what a command answered, e.g. `/status`).
pub fn message(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(chunk(text))
}

/// How a turn's outcome ends `session/prompt`: a stop reason, or the failure to answer
/// the request with.
pub fn stop_reason(outcome: &TurnOutcome) -> Result<StopReason, (ErrorKind, String)> {
    match outcome {
        TurnOutcome::Completed => Ok(StopReason::EndTurn),
        TurnOutcome::Interrupted => Ok(StopReason::Cancelled),
        TurnOutcome::MaxTurnsReached { .. } => Ok(StopReason::MaxTurnRequests),
        TurnOutcome::Truncated {
            reason: TruncationReason::Length,
        } => Ok(StopReason::MaxTokens),
        TurnOutcome::Truncated {
            reason: TruncationReason::ContentFilter,
        } => Ok(StopReason::Refusal),
        TurnOutcome::Failed { kind, message } => Err((*kind, message.clone())),
        TurnOutcome::LimitReached { limit } => Err((limit.kind(), limit.describe())),
    }
}

fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(text_block(text))
}

fn text_block(text: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text))
}

/// The kind an editor shows a built-in tool as; other tools (MCP, skills) are `other`.
pub(super) fn kind_of(name: &str) -> ToolKind {
    match name {
        "read_file" | "list" => ToolKind::Read,
        "edit_file" | "write_file" => ToolKind::Edit,
        "grep" | "glob" => ToolKind::Search,
        "bash" => ToolKind::Execute,
        "web_fetch" => ToolKind::Fetch,
        "web_search" => ToolKind::Search,
        "update_plan" => ToolKind::Think,
        "exit_plan" => ToolKind::SwitchMode,
        _ => ToolKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_and_thoughts_become_their_chunks() {
        let to_json = |e: &Event| serde_json::to_value(update_for(e)).unwrap();
        assert_eq!(
            to_json(&Event::TextDelta { text: "hi".into() }),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}})
        );
        assert_eq!(
            to_json(&Event::ReasoningDelta { text: "hm".into() })["sessionUpdate"],
            "agent_thought_chunk"
        );
        assert!(
            update_for(&Event::TextDelta {
                text: String::new()
            })
            .is_none()
        );
    }

    #[test]
    fn every_outcome_has_its_stop_reason() {
        assert_eq!(
            stop_reason(&TurnOutcome::Completed),
            Ok(StopReason::EndTurn)
        );
        assert_eq!(
            stop_reason(&TurnOutcome::Interrupted),
            Ok(StopReason::Cancelled)
        );
        assert_eq!(
            stop_reason(&TurnOutcome::MaxTurnsReached { limit: 3 }),
            Ok(StopReason::MaxTurnRequests)
        );
        assert!(
            stop_reason(&TurnOutcome::Failed {
                kind: ErrorKind::Auth,
                message: "no".into()
            })
            .is_err()
        );
    }
}
