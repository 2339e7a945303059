//! The instruction files attached to tool results (the nested `AGENTS.md` files of the
//! folders below the working folder): which the conversation holds, so a file is
//! attached once and again only after what held it left what is sent (a compaction, a
//! rewind, a failed turn, `/clear`, calls folded away to make room).
//!
//! An attachment is the text appended to one tool result, known by the result's call id
//! and by that text itself: it is in force while a result of that call still ends with
//! it, so nothing is read off a result's words (a file's text that merely looks like a
//! block counts for nothing). Eliding or cutting a result keeps its attached text whole
//! (`tail`). Each attachment is saved as its own record after the result's message, and
//! [`super::Replayer`] applies it the same way, so a resumed session knows what it holds.
//!
//! It must not know how the files are found or read.

use super::Conversation;
use crate::llm::Message;
use crate::protocol::InstructionFileInfo;
use crate::sessions::Record;

/// Instruction files attached to one tool result.
#[derive(Debug, Clone)]
pub(super) struct Attached {
    /// The call whose result carries them.
    call_id: String,
    /// The files, outer first.
    files: Vec<InstructionFileInfo>,
    /// The text appended to the result.
    text: String,
}

impl Attached {
    /// Whether `messages` still hold it: a result of its call ends with its text.
    fn held_by(&self, messages: &[Message]) -> bool {
        messages.iter().any(|m| {
            matches!(m, Message::Tool { tool_call_id, content }
                if *tool_call_id == self.call_id && content.ends_with(&self.text))
        })
    }
}

impl Conversation {
    /// The result of `call_id` just pushed ends with `bytes` bytes of the instruction
    /// files `files`: saved, and in force from now on.
    pub fn attach_instructions(
        &mut self,
        call_id: &str,
        files: Vec<InstructionFileInfo>,
        bytes: usize,
    ) {
        self.record(Record::InstructionsAttached {
            turn: self.turn,
            call_id: call_id.to_string(),
            files: files.clone(),
            bytes,
        });
        self.note_attached(call_id, files, bytes);
    }

    /// Takes the attachment into account (live, or replayed from its record): the last
    /// `bytes` bytes of the latest result of `call_id`.
    pub(super) fn note_attached(
        &mut self,
        call_id: &str,
        files: Vec<InstructionFileInfo>,
        bytes: usize,
    ) {
        let messages = &self.messages;
        self.attached.retain(|a| a.held_by(messages));
        let content = self.messages.iter().rev().find_map(|m| match m {
            Message::Tool {
                tool_call_id,
                content,
            } if tool_call_id == call_id => Some(content),
            _ => None,
        });
        let Some(content) = content else {
            return;
        };
        let Some(start) = content.len().checked_sub(bytes) else {
            return;
        };
        let Some(text) = content.get(start..) else {
            return;
        };
        if text.is_empty() {
            return;
        }
        self.attached.push(Attached {
            call_id: call_id.to_string(),
            files,
            text: text.to_string(),
        });
    }

    /// The attached instruction files the conversation holds, in the order attached.
    pub fn instructions_in_force(&self) -> Vec<InstructionFileInfo> {
        self.attached
            .iter()
            .filter(|a| a.held_by(&self.messages))
            .flat_map(|a| a.files.iter().cloned())
            .collect()
    }
}

/// How many bytes at the end of `content`, a result of `call_id`, are attached
/// instructions (kept when the result is elided or cut); 0 when none.
pub(super) fn tail(attached: &[Attached], call_id: &str, content: &str) -> usize {
    attached
        .iter()
        .filter(|a| a.call_id == call_id && content.ends_with(&a.text))
        .map(|a| a.text.len())
        .max()
        .unwrap_or(0)
}
