//! Tool calls as an editor shows them: each call's `tool_call` (title, kind, the files
//! it works on as `locations`), its live output streamed as `tool_call_update`s while a
//! command runs, and its end (status, a short summary, the file change as a `diff`
//! content with the line it starts at, or the command's output as terminal-like text).
//!
//! It keeps the output of the calls still running (the last [`MAX_SHOWN`] bytes of
//! each), since an update's content replaces what the editor showed. It must not know
//! the wire or how the agent runs tools.

use std::collections::HashMap;

use agent_client_protocol_schema::v1::{
    ContentBlock, Diff, SessionUpdate, TextContent, ToolCall, ToolCallContent, ToolCallLocation,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};

use super::updates::kind_of;
use crate::protocol::{ApprovalRequestKind, Event, FileChange, FileLocation, ToolStatus};

/// The most of a command's output an update carries: the tail, with a line saying how
/// much came before.
pub const MAX_SHOWN: usize = 32 * 1024;

/// The calls being run and what they printed so far.
#[derive(Debug, Default)]
pub struct ToolCalls {
    output: HashMap<String, Output>,
}

/// A running call's output: its tail and how many bytes were dropped before it.
#[derive(Debug, Default)]
struct Output {
    tail: String,
    dropped: usize,
}

impl Output {
    fn push(&mut self, text: &str) {
        self.tail.push_str(text);
        if self.tail.len() > MAX_SHOWN {
            let mut cut = self.tail.len() - MAX_SHOWN;
            while !self.tail.is_char_boundary(cut) {
                cut += 1;
            }
            // Start the tail at a line's beginning when one is near.
            if let Some(newline) = self.tail[cut..].find('\n')
                && newline < 1024
            {
                cut += newline + 1;
            }
            self.tail.drain(..cut);
            self.dropped += cut;
        }
    }

    fn shown(&self) -> String {
        if self.dropped == 0 {
            self.tail.clone()
        } else {
            format!("[{} earlier bytes not shown]\n{}", self.dropped, self.tail)
        }
    }
}

impl ToolCalls {
    /// The update a tool event shows the editor, if any (other events: `None`).
    pub fn update_for(&mut self, event: &Event) -> Option<SessionUpdate> {
        match event {
            Event::ToolCallBegin {
                call_id,
                name,
                summary,
                locations,
            } => Some(SessionUpdate::ToolCall(
                ToolCall::new(call_id.clone(), title(name, summary))
                    .kind(kind_of(name))
                    .status(ToolCallStatus::InProgress)
                    .locations(locations.iter().map(location).collect()),
            )),
            Event::ToolOutputDelta { call_id, text } => {
                let output = self.output.entry(call_id.clone()).or_default();
                output.push(text);
                let fields =
                    ToolCallUpdateFields::new().content(vec![terminal_text(&output.shown())]);
                Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id.clone(),
                    fields,
                )))
            }
            Event::ToolCallEnd {
                call_id,
                status,
                summary,
                diff,
                change,
                ..
            } => {
                let output = self.output.remove(call_id);
                let mut content: Vec<ToolCallContent> = Vec::new();
                // A command that printed shows its output; the summary (its first lines)
                // is kept only when the call failed, where it says why.
                let summary_shown = output.is_none() || *status != ToolStatus::Ok;
                if !summary.is_empty() && summary_shown {
                    content.push(text_block(summary).into());
                }
                if let Some(output) = output {
                    content.push(terminal_text(&output.shown()));
                }
                let mut fields = ToolCallUpdateFields::new().status(status_of(*status));
                match (change, diff) {
                    (Some(change), _) => {
                        content.push(diff_of(change));
                        fields = fields.locations(vec![
                            ToolCallLocation::new(change.path.clone())
                                .line(change.first_changed_line()),
                        ]);
                    }
                    (None, Some(diff)) => content.push(fenced("diff", diff)),
                    (None, None) => {}
                }
                Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id.clone(),
                    fields.content(content),
                )))
            }
            _ => None,
        }
    }
}

/// What a permission request shows of the call it asks about: the file it would
/// touch and, for an edit, its diff.
pub fn asked_about(request: &ApprovalRequestKind) -> ToolCallUpdateFields {
    match request {
        ApprovalRequestKind::Edit { path, diff, .. } => {
            let fields =
                ToolCallUpdateFields::new().locations(vec![ToolCallLocation::new(path.clone())]);
            match diff {
                Some(diff) if !diff.is_empty() => fields.content(vec![fenced("diff", diff)]),
                _ => fields,
            }
        }
        ApprovalRequestKind::Read { path, .. } | ApprovalRequestKind::ReadOutside { path, .. } => {
            ToolCallUpdateFields::new().locations(vec![ToolCallLocation::new(path.clone())])
        }
        _ => ToolCallUpdateFields::new(),
    }
}

fn location(place: &FileLocation) -> ToolCallLocation {
    ToolCallLocation::new(place.path.clone()).line(place.line)
}

fn diff_of(change: &FileChange) -> ToolCallContent {
    ToolCallContent::Diff(
        Diff::new(change.path.clone(), change.new.clone()).old_text(change.old.clone()),
    )
}

/// A command's output as the editor shows a terminal's: a fenced block.
fn terminal_text(output: &str) -> ToolCallContent {
    fenced("console", output)
}

/// `text` in a Markdown code block whose fence is longer than any run of backticks in
/// it, so the text cannot end the block early.
fn fenced(language: &str, text: &str) -> ToolCallContent {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    text_block(&format!("{fence}{language}\n{text}{newline}{fence}")).into()
}

fn text_block(text: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text))
}

fn title(name: &str, summary: &str) -> String {
    if summary.is_empty() {
        name.to_string()
    } else {
        format!("{name} {summary}")
    }
}

fn status_of(status: ToolStatus) -> ToolCallStatus {
    match status {
        ToolStatus::Ok => ToolCallStatus::Completed,
        ToolStatus::Error | ToolStatus::Denied | ToolStatus::Interrupted => ToolCallStatus::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn to_json(calls: &mut ToolCalls, event: &Event) -> Value {
        serde_json::to_value(calls.update_for(event)).unwrap()
    }

    fn end(call_id: &str, diff: Option<&str>, change: Option<FileChange>) -> Event {
        Event::ToolCallEnd {
            call_id: call_id.into(),
            name: "edit_file".into(),
            status: ToolStatus::Ok,
            summary: "Edited a.rs".into(),
            diff: diff.map(str::to_string),
            change: change.map(Box::new),
        }
    }

    #[test]
    fn a_file_call_names_its_location_and_its_change_is_a_diff() {
        let mut calls = ToolCalls::default();
        let begin = to_json(
            &mut calls,
            &Event::ToolCallBegin {
                call_id: "c1".into(),
                name: "read_file".into(),
                summary: "a.rs from line 7".into(),
                locations: vec![FileLocation {
                    path: "/p/a.rs".into(),
                    line: Some(7),
                }],
            },
        );
        assert_eq!(begin["sessionUpdate"], "tool_call");
        assert_eq!(begin["kind"], "read");
        assert_eq!(begin["locations"], json!([{"path": "/p/a.rs", "line": 7}]));

        let change = FileChange {
            path: "/p/a.rs".into(),
            old: Some("a\nb\n".into()),
            new: "a\nB\n".into(),
        };
        let ended = to_json(&mut calls, &end("c2", Some("@@ -2 +2 @@"), Some(change)));
        assert_eq!(ended["status"], "completed");
        assert_eq!(ended["content"][0]["content"]["text"], "Edited a.rs");
        assert_eq!(
            ended["content"][1],
            json!({"type": "diff", "path": "/p/a.rs", "oldText": "a\nb\n", "newText": "a\nB\n"})
        );
        assert_eq!(ended["locations"], json!([{"path": "/p/a.rs", "line": 2}]));

        // A new file has no old text; a change over the cap falls back to the diff text.
        let created = FileChange {
            path: "/p/n.rs".into(),
            old: None,
            new: "x\n".into(),
        };
        let ended = to_json(&mut calls, &end("c3", None, Some(created)));
        assert!(
            ended["content"][1]
                .get("oldText")
                .is_none_or(Value::is_null)
        );
        let ended = to_json(&mut calls, &end("c4", Some("-a\n+b"), None));
        assert_eq!(
            ended["content"][1]["content"]["text"],
            "```diff\n-a\n+b\n```"
        );
    }

    #[test]
    fn a_commands_output_streams_as_updates_and_ends_in_its_result() {
        let mut calls = ToolCalls::default();
        let delta = |text: &str| Event::ToolOutputDelta {
            call_id: "c1".into(),
            text: text.into(),
        };
        let first = to_json(&mut calls, &delta("one\n"));
        assert_eq!(first["sessionUpdate"], "tool_call_update");
        assert_eq!(
            first["content"][0]["content"]["text"],
            "```console\none\n```"
        );
        // Each update carries all the output so far (an update replaces the content).
        let second = to_json(&mut calls, &delta("two ```\n"));
        assert_eq!(
            second["content"][0]["content"]["text"],
            "````console\none\ntwo ```\n````"
        );
        let ended = to_json(
            &mut calls,
            &Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "bash".into(),
                status: ToolStatus::Error,
                summary: "exit 1".into(),
                diff: None,
                change: None,
            },
        );
        assert_eq!(ended["status"], "failed");
        // A failed command keeps its summary, which says why.
        assert_eq!(ended["content"][0]["content"]["text"], "exit 1");
        assert!(
            ended["content"][1]["content"]["text"]
                .as_str()
                .unwrap()
                .contains("one\ntwo")
        );
        assert!(calls.output.is_empty(), "an ended call's output is dropped");
    }

    #[test]
    fn a_command_that_printed_and_succeeded_shows_its_output_alone() {
        let mut calls = ToolCalls::default();
        calls.update_for(&Event::ToolOutputDelta {
            call_id: "c1".into(),
            text: "built\n".into(),
        });
        let ended = to_json(
            &mut calls,
            &Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "bash".into(),
                status: ToolStatus::Ok,
                summary: "built".into(),
                diff: None,
                change: None,
            },
        );
        assert_eq!(
            ended["content"],
            json!([{"type": "content", "content": {"type": "text", "text": "```console\nbuilt\n```"}}])
        );
    }

    #[test]
    fn a_permission_request_shows_the_file_and_the_edits_diff() {
        let edit = ApprovalRequestKind::Edit {
            path: "/p/a.rs".into(),
            via: None,
            diff: Some("-a\n+b".into()),
            location: crate::protocol::Location::Inside,
        };
        let fields = serde_json::to_value(asked_about(&edit)).unwrap();
        assert_eq!(fields["locations"], json!([{"path": "/p/a.rs"}]));
        assert_eq!(
            fields["content"][0]["content"]["text"],
            "```diff\n-a\n+b\n```"
        );
        let read = ApprovalRequestKind::Read {
            path: "/p/.env".into(),
            via: None,
        };
        let fields = serde_json::to_value(asked_about(&read)).unwrap();
        assert_eq!(fields["locations"], json!([{"path": "/p/.env"}]));
        assert!(fields.get("content").is_none_or(Value::is_null));
    }

    #[test]
    fn a_long_output_keeps_its_tail_and_says_what_was_dropped() {
        let mut output = Output::default();
        for n in 0..10_000 {
            output.push(&format!("line {n} é\n"));
        }
        assert!(output.tail.len() <= MAX_SHOWN);
        assert!(output.tail.starts_with("line "), "{}", &output.tail[..20]);
        assert!(output.tail.ends_with("line 9999 é\n"));
        let shown = output.shown();
        assert!(shown.starts_with(&format!("[{} earlier bytes not shown]\n", output.dropped)));
    }
}
