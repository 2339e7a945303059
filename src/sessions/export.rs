//! Exports of a session file: Markdown fit to attach to a pull request
//! ([`export_markdown`]; [`markdown`] with [`Detail::Brief`] is the short transcript of
//! `harness9 sessions show`), and one JSON document holding everything
//! ([`export_json`]). Both stream the file record by record.
//!
//! It owns how a session reads as a document: turns, quoted prompts, one line per tool
//! call, shortened tool output in fences that the output cannot close. It must not know
//! where files live or how the agent replays a session.

use std::io::{self, Write};
use std::path::Path;

use super::error::SessionError;
use super::reader::{ReadReport, one_line, read_fallible, read_header, summary};
use super::record::{NoteKind, Record, display_utc};
use crate::llm::{Message, ToolCall};
use crate::protocol::CompactionTrigger;
use crate::protocol::TurnOutcome;

/// Tool output lines an export shows.
const RESULT_LINES: usize = 20;
/// Tool output bytes an export shows.
const RESULT_BYTES: usize = 2_048;
/// Prompt lines the brief transcript shows.
const BRIEF_PROMPT_LINES: usize = 20;
/// Longest tool-call argument shown, in characters.
const CALL_CHARS: usize = 100;

/// One line naming an image of a message: name, type, size and the start of its hash.
fn image_line(image: &crate::images::ImageRef) -> String {
    let name = one_line(&image.name, CALL_CHARS);
    let short = image.sha256.get(..12).unwrap_or(&image.sha256);
    format!(
        "> [image `{}`: {:?}, {} bytes, sha256 {short}…]",
        name.replace('`', "'"),
        image.kind,
        image.size
    )
}

/// How much of a session the Markdown holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Title, header table, prompts, tool calls with their (shortened) output, answers.
    Full,
    /// Prompts (shortened), one line per tool call without output, answers.
    Brief,
}

/// The session at `path` as Markdown for a pull request (see [`markdown`]).
pub fn export_markdown<W: Write + ?Sized>(
    path: &Path,
    out: &mut W,
) -> Result<ReadReport, SessionError> {
    markdown(path, Detail::Full, out)
}

/// The session at `path` as Markdown, with `detail`. The report's warnings name the
/// lines that were skipped.
pub fn markdown<W: Write + ?Sized>(
    path: &Path,
    detail: Detail,
    out: &mut W,
) -> Result<ReadReport, SessionError> {
    let mut doc = Markdown {
        out: &mut *out,
        detail,
        started: false,
        turn: None,
        pending: Vec::new(),
    };
    if detail == Detail::Full {
        let s = summary(path)?;
        let header = read_header(path)?;
        let model = if s.model == header.model {
            header.model.clone()
        } else {
            format!("{}, then {}", header.model, s.model)
        };
        let title = format!(
            "# Session {}\n\n| Created | Project | Model | Turns |\n|---|---|---|---|\n\
             | {} UTC | {} | {} | {} |\n",
            header.id,
            display_utc(header.created_ms),
            table_cell(&header.project.display().to_string()),
            table_cell(&model),
            s.turns
        );
        doc.block(&title).map_err(output)?;
    }
    let report = read_fallible(path, |record| doc.record(record).map_err(output))?;
    doc.flush_calls().map_err(output)?;
    Ok(report)
}

fn output(source: io::Error) -> SessionError {
    SessionError::Output { source }
}

/// The Markdown being written: blocks separated by one blank line.
struct Markdown<'w, W: Write + ?Sized> {
    out: &'w mut W,
    detail: Detail,
    /// Whether a block was written (the next one needs a blank line before it).
    started: bool,
    /// The turn whose heading was written last.
    turn: Option<u64>,
    /// Tool calls whose output has not been seen yet (full detail).
    pending: Vec<ToolCall>,
}

impl<W: Write + ?Sized> Markdown<'_, W> {
    /// Writes `text` (which ends with a newline) as a block of its own.
    fn block(&mut self, text: &str) -> io::Result<()> {
        if self.started {
            self.out.write_all(b"\n")?;
        }
        self.started = true;
        self.out.write_all(text.as_bytes())
    }

    fn note(&mut self, text: &str) -> io::Result<()> {
        self.block(&format!("*{}*\n", escape_inline(text)))
    }

    /// Starts turn `turn`'s section unless it is the current one.
    fn enter_turn(&mut self, turn: u64) -> io::Result<()> {
        if self.turn != Some(turn) {
            self.flush_calls()?;
            self.turn = Some(turn);
            self.block(&format!("### Turn {turn}\n"))?;
        }
        Ok(())
    }

    fn record(&mut self, record: Record) -> io::Result<()> {
        match record {
            Record::Message { turn, message } => {
                self.enter_turn(turn)?;
                self.message(message)
            }
            Record::TurnEnd { turn, outcome } => {
                self.enter_turn(turn)?;
                self.flush_calls()?;
                self.outcome(&outcome)
            }
            Record::SkillLoaded { name } => self.note(&format!("Skill loaded: {name}")),
            Record::SkillUnloaded { name } => self.note(&format!("Skill unloaded: {name}")),
            Record::Compacted {
                turn,
                trigger,
                tokens_before,
                tokens_after,
                summarized_messages,
                ..
            } => {
                self.enter_turn(turn)?;
                let why = match trigger {
                    CompactionTrigger::Threshold => "the context window was nearly full",
                    CompactionTrigger::Manual => "/compact",
                    CompactionTrigger::Rejection => "the provider found the request too long",
                };
                self.note(&format!(
                    "Context compacted ({why}): about {tokens_before} → {tokens_after} \
                     tokens, {summarized_messages} messages summarized."
                ))
            }
            Record::ModelChanged { model } => self.note(&format!("Switched to model {model}.")),
            Record::EffortChanged { effort } => {
                self.note(&format!("Reasoning effort set to {effort}."))
            }
            Record::Cleared => self.note("Conversation cleared (/clear)."),
            Record::Rewound { turn } => self.note(&format!(
                "Conversation rewound to before turn {turn}: it and later turns are not sent again."
            )),
            Record::Note { kind, .. } => self.note(match kind {
                NoteKind::Shell => "The user ran a shell command (`!`); its output went to the model with the next message.",
                NoteKind::Undo => "/undo put files back; the model was told with the next message.",
                NoteKind::Rewind => "A rewind put files back; the model was told with the next message.",
                NoteKind::Hook => "A hook (UserPromptSubmit or SessionStart) added context; the model got it with the message.",
            }),
            // The attached text is in the tool result it belongs to.
            Record::Prompt { .. } | Record::InstructionsAttached { .. } | Record::Plan { .. } => {
                Ok(())
            }
            Record::Resumed {
                at_ms,
                cwd,
                version,
            } => self.note(&format!(
                "Resumed {} UTC in {} (harness9 {version}).",
                display_utc(at_ms),
                cwd.display()
            )),
            Record::Header(_) | Record::SystemPrompt { .. } | Record::Usage { .. } => Ok(()),
        }
    }

    fn message(&mut self, message: Message) -> io::Result<()> {
        match message {
            Message::User { content, images } => {
                self.flush_calls()?;
                let limit = match self.detail {
                    Detail::Full => usize::MAX,
                    Detail::Brief => BRIEF_PROMPT_LINES,
                };
                let mut block = quote(&content, limit);
                // An export names its images by reference (their files are in the
                // session's `<id>.artifacts/images/`, by hash): it never inlines them.
                for image in &images {
                    block.push_str(&format!("{}\n", image_line(image)));
                }
                self.block(&block)
            }
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                self.flush_calls()?;
                let answer = content.trim_end();
                if !answer.trim_start().is_empty() {
                    self.block(&format!("{}\n", close_open_fence(answer)))?;
                }
                match self.detail {
                    Detail::Full => self.pending = tool_calls,
                    Detail::Brief => {
                        if !tool_calls.is_empty() {
                            let list: String = tool_calls
                                .iter()
                                .map(|c| format!("- {}\n", call_line(c)))
                                .collect();
                            self.block(&list)?;
                        }
                    }
                }
                Ok(())
            }
            Message::Tool {
                tool_call_id,
                content,
            } => {
                if self.detail == Detail::Brief {
                    return Ok(());
                }
                let line = match self.pending.iter().position(|c| c.id == tool_call_id) {
                    Some(i) => call_line(&self.pending.remove(i)),
                    None => "**tool output**".to_string(),
                };
                self.block(&format!("{line}\n"))?;
                self.block(&fenced_output(&content))
            }
            Message::System { .. } => Ok(()),
        }
    }

    /// Calls whose output never came (an interrupted turn), one line each.
    fn flush_calls(&mut self) -> io::Result<()> {
        for call in std::mem::take(&mut self.pending) {
            self.block(&format!("{} — *no output*\n", call_line(&call)))?;
        }
        Ok(())
    }

    fn outcome(&mut self, outcome: &TurnOutcome) -> io::Result<()> {
        match outcome {
            TurnOutcome::Completed => Ok(()),
            TurnOutcome::Interrupted => self.note("Interrupted."),
            TurnOutcome::MaxTurnsReached { limit } => self.note(&format!(
                "Stopped after {limit} model requests (--max-turns)."
            )),
            TurnOutcome::Truncated { reason } => {
                self.note(&format!("Incomplete: {}.", reason.describe()))
            }
            TurnOutcome::LimitReached { limit } => {
                self.note(&format!("Limit reached: {}.", limit.describe()))
            }
            TurnOutcome::Failed { kind, message } => self.block(&format!(
                "**Turn failed** ({}): {}\n",
                kind.as_str(),
                escape_inline(&one_line(message, 500))
            )),
        }
    }
}

/// `text` as a quote block, at most `max_lines` lines of it.
fn quote(text: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let mut out = String::new();
    for line in lines.iter().take(max_lines) {
        if line.trim().is_empty() {
            out.push_str(">\n");
        } else {
            out.push_str("> ");
            out.push_str(line);
            out.push('\n');
        }
    }
    if lines.len() > max_lines {
        out.push_str(&format!(
            ">\n> … ({})\n",
            more_lines(lines.len() - max_lines)
        ));
    }
    if out.is_empty() {
        out.push_str(">\n");
    }
    out
}

fn more_lines(n: usize) -> String {
    if n == 1 {
        "1 more line".to_string()
    } else {
        format!("{n} more lines")
    }
}

/// `**name** `argument``: the tool's name and its main argument on one line.
fn call_line(call: &ToolCall) -> String {
    let name = format!("**{}**", escape_inline(&call.name));
    match call_argument(&call.arguments) {
        Some(arg) => format!("{name} {}", inline_code(&arg)),
        None => name,
    }
}

/// The argument worth showing: a well-known one (`command`, `path`, …), the only one,
/// or all of them as compact JSON; on one line, shortened.
fn call_argument(arguments: &str) -> Option<String> {
    const MAIN: [&str; 8] = [
        "command",
        "path",
        "file_path",
        "pattern",
        "query",
        "url",
        "name",
        "skill",
    ];
    let text = match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(map)) if map.is_empty() => return None,
        Ok(serde_json::Value::Object(map)) => {
            let main = MAIN
                .iter()
                .find_map(|key| map.get(*key).and_then(|v| v.as_str()))
                .or_else(|| match map.values().collect::<Vec<_>>().as_slice() {
                    [only] => only.as_str(),
                    _ => None,
                });
            match main {
                Some(s) => s.to_string(),
                None => serde_json::Value::Object(map).to_string(),
            }
        }
        _ if arguments.trim().is_empty() => return None,
        _ => arguments.to_string(),
    };
    let first = text.lines().next().unwrap_or_default();
    let shown = one_line(first, CALL_CHARS);
    if text.trim_end().contains('\n') && !shown.ends_with('…') {
        Some(format!("{shown} …"))
    } else {
        Some(shown)
    }
}

/// Tool output in a fence it cannot close, shortened to its first [`RESULT_LINES`]
/// lines and [`RESULT_BYTES`] bytes, with a line saying how much was left out.
fn fenced_output(content: &str) -> String {
    let content = content.trim_end_matches(['\n', '\r']);
    if content.trim().is_empty() {
        return "*(no output)*\n".to_string();
    }
    let total = content.lines().count();
    let mut shown_len = 0;
    let mut shown_lines = 0;
    let mut cut_inside_line = false;
    for line in content.split_inclusive('\n') {
        if shown_lines == RESULT_LINES {
            break;
        }
        if shown_len + line.len() > RESULT_BYTES {
            if shown_lines == 0 {
                let mut end = RESULT_BYTES;
                while !content.is_char_boundary(end) {
                    end -= 1;
                }
                shown_len = end;
                cut_inside_line = true;
            }
            break;
        }
        shown_len += line.len();
        shown_lines += 1;
    }
    let shown = content[..shown_len].trim_end_matches(['\n', '\r']);
    let fence = fence_for(shown);
    let mut out = format!("{fence}\n{shown}\n{fence}\n");
    let left_out = total - shown_lines;
    if left_out > 0 {
        let what = if cut_inside_line {
            format!("{} more bytes", content.len() - shown_len)
        } else {
            more_lines(left_out)
        };
        out.push_str(&format!("\n… ({what})\n"));
    }
    out
}

/// A backtick fence longer than any run of backticks in `text` (at least three).
fn fence_for(text: &str) -> String {
    "`".repeat(longest_run(text, '`').max(2) + 1)
}

fn longest_run(text: &str, c: char) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// `text` as inline code that its own backticks cannot end.
fn inline_code(text: &str) -> String {
    let ticks = "`".repeat(longest_run(text, '`') + 1);
    if text.starts_with(['`', ' ']) || text.ends_with(['`', ' ']) {
        format!("{ticks} {text} {ticks}")
    } else {
        format!("{ticks}{text}{ticks}")
    }
}

/// `text` with the characters that would start emphasis, code, links or HTML escaped.
fn escape_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '#' | '|'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A table cell: one line, `|` escaped.
fn table_cell(text: &str) -> String {
    one_line(text, usize::MAX).replace('|', "\\|")
}

/// The model's Markdown, with a fence it left open closed (so it cannot swallow the rest
/// of the document).
fn close_open_fence(text: &str) -> String {
    let mut open: Option<(char, usize)> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent > 3 {
            continue;
        }
        let rest = &line[indent..];
        let Some(c) = rest.chars().next().filter(|c| matches!(c, '`' | '~')) else {
            continue;
        };
        let run = rest.chars().take_while(|&x| x == c).count();
        if run < 3 {
            continue;
        }
        match open {
            None => open = Some((c, run)),
            Some((oc, olen)) if oc == c && run >= olen && rest[run..].trim().is_empty() => {
                open = None;
            }
            Some(_) => {}
        }
    }
    match open {
        Some((c, len)) => format!("{text}\n{}", c.to_string().repeat(len)),
        None => text.to_string(),
    }
}

/// The whole session as one JSON document, `{"header": …, "records": [ … ]}`, nothing
/// shortened; one record per line inside the array. Lines that could not be read are
/// left out (the report's warnings name them).
pub fn export_json<W: Write + ?Sized>(
    path: &Path,
    out: &mut W,
) -> Result<ReadReport, SessionError> {
    let header = read_header(path)?;
    let encode = |source| SessionError::Encode {
        kind: "header",
        source,
    };
    out.write_all(b"{\"header\":").map_err(output)?;
    serde_json::to_writer(&mut *out, &header).map_err(encode)?;
    out.write_all(b",\"records\":[").map_err(output)?;
    let mut first = true;
    let report = read_fallible(path, |record| {
        let separator: &[u8] = if first { b"\n" } else { b",\n" };
        first = false;
        out.write_all(separator).map_err(output)?;
        serde_json::to_writer(&mut *out, &record).map_err(|source| SessionError::Encode {
            kind: record.type_name(),
            source,
        })
    })?;
    out.write_all(b"\n]}\n").map_err(output)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;
    use crate::protocol::{ErrorKind, Usage};
    use crate::sessions::{SessionStore, read, test_header_with_id};

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    fn user(turn: u64, content: &str) -> Record {
        Record::Message {
            turn,
            message: Message::User {
                images: Vec::new(),
                content: content.into(),
            },
        }
    }

    fn assistant(turn: u64, content: &str, tool_calls: Vec<ToolCall>) -> Record {
        Record::Message {
            turn,
            message: Message::Assistant {
                content: content.into(),
                reasoning: Some("thinking".into()),
                tool_calls,
            },
        }
    }

    fn tool(turn: u64, id: &str, content: &str) -> Record {
        Record::Message {
            turn,
            message: Message::Tool {
                tool_call_id: id.into(),
                content: content.into(),
            },
        }
    }

    /// Three turns: tool output holding a fence, a skill, an answer with an open fence;
    /// long output, a compaction and a failure; a resume and an interrupted call.
    fn demo_session(home: &Path) -> (std::path::PathBuf, Vec<Record>) {
        let store = SessionStore::new(home);
        let header = test_header_with_id("20261123-173501-a3f9c2", "/work/demo", 1_795_455_301_000);
        let writer = store.create(&header).unwrap();
        let long: String = (1..=100).map(|i| format!("log line {i}\n")).collect();
        let records = vec![
            Record::SystemPrompt {
                prompt: "You are harness9.".into(),
            },
            user(1, "Fix the failing test\n\nin src/lib.rs"),
            assistant(
                1,
                "Let me run the tests.",
                vec![call("c1", "bash", r#"{"command":"cargo test"}"#)],
            ),
            tool(
                1,
                "c1",
                "running 1 test\nerror: expected\n```rust\nassert_eq!(a, b);\n```\n",
            ),
            Record::SkillLoaded {
                name: "rust_testing".into(),
            },
            assistant(1, "The test passes now:\n\n```rust\nfn main() {}", vec![]),
            Record::Usage {
                turn: 1,
                usage: Usage::default(),
                session: Usage::default(),
            },
            Record::TurnEnd {
                turn: 1,
                outcome: TurnOutcome::Completed,
            },
            user(2, "Show me the build log"),
            assistant(
                2,
                "",
                vec![
                    call("c2", "read_file", r#"{"path":"build.log"}"#),
                    call("c3", "bash", r#"{"command":"echo `date`\necho done"}"#),
                ],
            ),
            tool(2, "c2", &long),
            tool(2, "c3", ""),
            Record::Compacted {
                user_messages: Vec::new(),
                turn: 2,
                trigger: CompactionTrigger::Threshold,
                tokens_before: 120_000,
                tokens_after: 8_000,
                summarized_messages: 14,
                messages: vec![],
            },
            Record::TurnEnd {
                turn: 2,
                outcome: TurnOutcome::Failed {
                    kind: ErrorKind::Network,
                    message: "cannot reach 127.0.0.1:8080".into(),
                },
            },
            Record::Resumed {
                at_ms: 1_795_459_000_000,
                cwd: "/work/demo/src".into(),
                version: "0.2.0".into(),
            },
            Record::ModelChanged {
                model: "big-model".into(),
            },
            user(3, "Try once more"),
            assistant(3, "", vec![call("c4", "grep", r#"{"a":1,"b":2}"#)]),
            Record::TurnEnd {
                turn: 3,
                outcome: TurnOutcome::Interrupted,
            },
        ];
        for r in &records {
            writer.append(r).unwrap();
        }
        (writer.path().to_path_buf(), records)
    }

    fn render(path: &Path, detail: Detail) -> String {
        let mut out = Vec::new();
        let report = markdown(path, detail, &mut out).unwrap();
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        String::from_utf8(out).unwrap()
    }

    /// The demo session, rendered.
    fn demo_markdown(detail: Detail) -> String {
        let tmp = tempfile::tempdir().unwrap();
        let (path, _) = demo_session(tmp.path());
        render(&path, detail)
    }

    #[test]
    fn markdown_export_for_a_pull_request() {
        let md = demo_markdown(Detail::Full);
        insta::assert_snapshot!("export_full", md);
        // The output's own fence cannot end the block around it.
        assert!(md.contains("````\nrunning 1 test\n"), "{md}");
        assert!(md.contains("\n… (80 more lines)\n"), "{md}");
        assert!(!md.contains("log line 21"), "{md}");
    }

    #[test]
    fn brief_transcript_for_show() {
        let md = demo_markdown(Detail::Brief);
        insta::assert_snapshot!("export_brief", md);
        assert!(!md.contains("running 1 test"), "{md}");
    }

    #[test]
    fn json_export_holds_everything() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, records) = demo_session(tmp.path());
        let mut out = Vec::new();
        let report = export_json(&path, &mut out).unwrap();
        assert_eq!(report.records, records.len());
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let header: crate::sessions::Header =
            serde_json::from_value(doc["header"].clone()).unwrap();
        assert_eq!(header, report.header);
        let back: Vec<Record> = serde_json::from_value(doc["records"].clone()).unwrap();
        assert_eq!(back, records);
        // The same as reading the file.
        let mut read_back = Vec::new();
        read(&path, |r| read_back.push(r)).unwrap();
        assert_eq!(back, read_back);
    }

    #[test]
    fn fences_and_inline_code_are_safe() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ```` b"), "`````");
        assert_eq!(inline_code("cargo test"), "`cargo test`");
        assert_eq!(inline_code("echo `date`"), "`` echo `date` ``");
        assert_eq!(inline_code("a ` b"), "``a ` b``");
        assert_eq!(close_open_fence("```\nx\n```"), "```\nx\n```");
        assert_eq!(close_open_fence("~~~~\nx\n~~~"), "~~~~\nx\n~~~\n~~~~");
        let one_long_line = "x".repeat(5_000);
        let out = fenced_output(&one_long_line);
        assert!(out.ends_with("\n… (2952 more bytes)\n"), "{out}");
        let multibyte = "é".repeat(3_000);
        assert!(fenced_output(&multibyte).contains("more bytes"));
        assert_eq!(fenced_output("  \n"), "*(no output)*\n");
        assert_eq!(call_argument("{}"), None);
        assert_eq!(call_argument("not json").as_deref(), Some("not json"));
        assert_eq!(
            call_argument(r#"{"note":"only one"}"#).as_deref(),
            Some("only one")
        );
    }
}
