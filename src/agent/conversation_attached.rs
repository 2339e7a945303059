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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::conversation::{ELIDED_PREFIX, Replayer};
    use crate::llm::ToolCall;
    use crate::protocol::{CompactionTrigger, InstructionOrigin, TurnOutcome};
    use crate::sessions::Record;
    use crate::tools::OutputKind;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Collect(Arc<Mutex<Vec<Record>>>);

    impl crate::agent::conversation::RecordSink for Collect {
        fn append(&mut self, record: &Record) -> Result<(), String> {
            self.0.lock().unwrap().push(record.clone());
            Ok(())
        }
    }

    fn reproducible(_: &str) -> OutputKind {
        OutputKind::Reproducible
    }

    fn file(name: &str) -> InstructionFileInfo {
        InstructionFileInfo::new(
            format!("/p/{name}/AGENTS.md").into(),
            InstructionOrigin::Nested,
            9,
            9,
        )
    }

    fn block(name: &str) -> String {
        format!("\n\n<instructions path=\"/p/{name}/AGENTS.md\">\n{name} rule\n</instructions>")
    }

    /// One turn: a call whose result is `output` bytes, with `name`'s block attached
    /// when given, then an answer.
    fn turn(c: &mut Conversation, output: usize, attach: Option<&str>) -> String {
        let turn = c.begin_turn();
        let id = format!("call{turn}");
        c.push(Message::User {
            images: Vec::new(),
            content: format!("prompt {turn}"),
        });
        c.push(Message::Assistant {
            content: Default::default(),
            reasoning: None,
            tool_calls: vec![ToolCall {
                id: id.clone(),
                name: "read_file".into(),
                arguments: "{}".into(),
            }],
        });
        let mut content = "o".repeat(output);
        let text = attach.map(block).unwrap_or_default();
        content.push_str(&text);
        c.push(Message::Tool {
            tool_call_id: id.clone(),
            content,
        });
        if let Some(name) = attach {
            c.attach_instructions(&id, vec![file(name)], text.len());
        }
        c.push(Message::Assistant {
            content: format!("answer {turn}").into(),
            reasoning: None,
            tool_calls: Vec::new(),
        });
        c.end_turn(&TurnOutcome::Completed, &reproducible);
        id
    }

    fn names(c: &Conversation) -> Vec<String> {
        c.instructions_in_force()
            .iter()
            .map(|f| f.path.display().to_string())
            .collect()
    }

    fn replay(records: &Collect) -> Conversation {
        let mut r = Replayer::new("sys".into(), None, &reproducible);
        for record in records.0.lock().unwrap().clone() {
            r.apply(record);
        }
        r.finish(None).conversation
    }

    #[test]
    fn attached_files_stay_in_force_through_elision_and_a_replay() {
        let records = Collect::default();
        let mut c = Conversation::new("sys".into(), Some(Box::new(records.clone())));
        turn(&mut c, 10_000, Some("pkg"));
        assert_eq!(names(&c), ["/p/pkg/AGENTS.md"]);
        for _ in 0..4 {
            turn(&mut c, 10, None);
        }
        // The old result was elided; its instructions were kept after the marker.
        let Message::Tool { content, .. } = &c.messages()[3] else {
            panic!("{:?}", c.messages()[3]);
        };
        assert!(content.starts_with(ELIDED_PREFIX), "{content}");
        assert!(content.ends_with(&block("pkg")), "{content}");
        assert!(
            content.contains("10000 bytes"),
            "the marker counts the output only"
        );
        assert_eq!(names(&c), ["/p/pkg/AGENTS.md"]);
        // A resumed session sends the same and knows the same.
        let resumed = replay(&records);
        assert_eq!(resumed.messages(), c.messages());
        assert_eq!(names(&resumed), ["/p/pkg/AGENTS.md"]);
    }

    #[test]
    fn a_small_window_cuts_the_output_and_keeps_the_attached_text_whole() {
        let mut c = Conversation::new("sys".into(), None);
        c.set_window(Some(10_000));
        turn(&mut c, 20_000, Some("pkg"));
        let Message::Tool { content, .. } = &c.messages()[3] else {
            panic!();
        };
        assert!(content.len() < 20_000, "{}", content.len());
        assert!(content.ends_with(&block("pkg")), "{content}");
        assert_eq!(names(&c), ["/p/pkg/AGENTS.md"]);
    }

    #[test]
    fn a_compaction_a_rewind_a_failed_turn_and_clear_take_them_out_of_force() {
        let records = Collect::default();
        let mut c = Conversation::new("sys".into(), Some(Box::new(records.clone())));
        turn(&mut c, 10, Some("a"));
        turn(&mut c, 10, Some("b"));
        assert_eq!(names(&c), ["/p/a/AGENTS.md", "/p/b/AGENTS.md"]);
        // A compaction that summarized turn 1 only.
        let keep = c.current_turn_start(2);
        c.replace_with_summary(
            keep,
            vec![
                Message::User {
                    images: Vec::new(),
                    content: "summary".into(),
                },
                Message::Assistant {
                    content: "ok".into(),
                    reasoning: None,
                    tool_calls: Vec::new(),
                },
            ],
            Vec::new(),
            CompactionTrigger::Manual,
            100,
            &[],
        );
        assert_eq!(names(&c), ["/p/b/AGENTS.md"]);
        assert_eq!(names(&replay(&records)), ["/p/b/AGENTS.md"]);
        // Attached again later; a rewind to before that turn takes it back.
        turn(&mut c, 10, Some("a"));
        assert_eq!(names(&c), ["/p/b/AGENTS.md", "/p/a/AGENTS.md"]);
        assert!(c.rewind_to(3));
        assert_eq!(names(&c), ["/p/b/AGENTS.md"]);
        assert_eq!(names(&replay(&records)), ["/p/b/AGENTS.md"]);
        c.clear();
        assert!(names(&c).is_empty());
        assert!(names(&replay(&records)).is_empty());
        // A failed turn's results are not sent again: neither are its instructions.
        let id = turn(&mut c, 10, Some("a"));
        assert_eq!(names(&c), ["/p/a/AGENTS.md"]);
        c.begin_turn();
        c.push(Message::User {
            images: Vec::new(),
            content: "x".into(),
        });
        c.push(Message::Tool {
            tool_call_id: "failing".into(),
            content: format!("out{}", block("z")),
        });
        c.attach_instructions("failing", vec![file("z")], block("z").len());
        let failed = TurnOutcome::Failed {
            kind: crate::protocol::ErrorKind::Server,
            message: "500".into(),
        };
        c.end_turn(&failed, &reproducible);
        assert_eq!(names(&c), ["/p/a/AGENTS.md"]);
        assert_eq!(names(&replay(&records)), ["/p/a/AGENTS.md"]);
        assert_eq!(id, "call4");
    }

    #[test]
    fn a_result_that_only_looks_like_a_block_is_not_in_force() {
        let mut c = Conversation::new("sys".into(), None);
        // A file's text that reads like an attached block: nothing was attached.
        let id = turn(&mut c, 10, None);
        let Some(Message::Tool { content, .. }) = c.messages.get_mut(3) else {
            panic!();
        };
        content.push_str(&block("pkg"));
        assert!(names(&c).is_empty());
        // An attachment whose text the result no longer ends with is not in force.
        c.push(Message::Tool {
            tool_call_id: id.clone(),
            content: format!("x{}", block("q")),
        });
        c.attach_instructions(&id, vec![file("q")], block("q").len());
        assert_eq!(names(&c), ["/p/q/AGENTS.md"]);
        if let Some(Message::Tool { content, .. }) = c.messages.last_mut() {
            content.push_str("changed");
        }
        assert!(names(&c).is_empty());
    }
}
