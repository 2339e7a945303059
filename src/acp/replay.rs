//! `session/load`'s replay: what a saved session said ([`HistoryItem`]s, as the agent
//! tells a resumed session) becomes the `session/update` notifications an editor
//! rebuilds its view from: the user's messages as `user_message_chunk`, answers as
//! `agent_message_chunk`, reasoning as `agent_thought_chunk`, and each tool call as a
//! finished `tool_call`.
//!
//! It keeps no state and must not know the wire or how the agent resumes. The history's
//! words are the saved session's (untrusted); the wire's writer escapes them on the way.

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, SessionUpdate, TextContent, ToolCall, ToolCallStatus,
};

use crate::protocol::HistoryItem;

/// The updates that replay `history`, in order. Tool calls get ids of their own
/// (`history-N`): the saved session does not keep the model's.
pub fn updates(history: &[HistoryItem]) -> Vec<SessionUpdate> {
    let mut calls = 0;
    history
        .iter()
        .map(|item| match item {
            HistoryItem::User { text } => SessionUpdate::UserMessageChunk(chunk(text)),
            HistoryItem::Assistant { text } => SessionUpdate::AgentMessageChunk(chunk(text)),
            HistoryItem::Reasoning { text } => SessionUpdate::AgentThoughtChunk(chunk(text)),
            HistoryItem::ToolCall { name, arguments } => {
                calls += 1;
                let title = if arguments.is_empty() {
                    name.clone()
                } else {
                    format!("{name} {arguments}")
                };
                SessionUpdate::ToolCall(
                    ToolCall::new(format!("history-{calls}"), title)
                        .kind(super::updates::kind_of(name))
                        .status(ToolCallStatus::Completed),
                )
            }
        })
        .collect()
}

fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_item_becomes_its_update_in_order() {
        let history = vec![
            HistoryItem::User { text: "hi".into() },
            HistoryItem::Reasoning { text: "hm".into() },
            HistoryItem::ToolCall {
                name: "read_file".into(),
                arguments: "{\"path\":\"a\"}".into(),
            },
            HistoryItem::Assistant { text: "yes".into() },
            HistoryItem::ToolCall {
                name: "bash".into(),
                arguments: String::new(),
            },
        ];
        let got: Vec<serde_json::Value> = updates(&history)
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect();
        let kinds: Vec<&str> = got
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "user_message_chunk",
                "agent_thought_chunk",
                "tool_call",
                "agent_message_chunk",
                "tool_call"
            ]
        );
        assert_eq!(got[0]["content"]["text"], "hi");
        assert_eq!(got[2]["toolCallId"], "history-1");
        assert_eq!(got[2]["title"], "read_file {\"path\":\"a\"}");
        assert_eq!(got[2]["kind"], "read");
        assert_eq!(got[2]["status"], "completed");
        assert_eq!(got[4]["toolCallId"], "history-2");
        assert_eq!(got[4]["title"], "bash");
    }
}
