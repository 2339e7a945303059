//! Compaction: when the conversation nears the context window (or the user asks, or the
//! provider refused a request as too long), the model writes a structured summary of the
//! older messages and the conversation sent from then on is that summary, the user's own
//! messages word for word (within a budget), the instructions of the skills still loaded,
//! and the current turn. The system prompt is untouched and the saved session keeps
//! every original message.
//!
//! It owns the summary request and the shape of the summary message. It must not know
//! how the conversation is stored or how the compaction is shown.

use crate::agent::conversation::{SUMMARY_MESSAGES, estimate_messages};
use crate::agent::turn::{SessionState, TurnContext};
use crate::llm::{ChatRequest, Message};
use crate::protocol::{CompactionTrigger, ErrorKind, Event, Usage};
use crate::truncate::truncate_head_tail;

/// Compaction starts before a request would pass this share of the window (percent).
pub const COMPACT_AT_PERCENT: u64 = 85;

/// The share of the window (percent) the user's verbatim messages may take.
const USER_MESSAGES_PERCENT: u64 = 10;

/// The share of the window (percent) the transcript given to the summarizer may take.
const TRANSCRIPT_PERCENT: u64 = 50;

/// Bytes of one tool result shown to the summarizer.
const TOOL_RESULT_BYTES: usize = 1500;

/// How the summary request is framed.
const SUMMARIZER_PROMPT: &str = "You summarize a conversation between a user and a coding agent so that the agent can \
continue the work with only your summary. Write these sections, in Markdown, and nothing else:\n\
## Goal\nWhat the user wants overall.\n\
## Constraints\nEvery instruction, preference and restriction the user stated, in their words where possible. Never drop one.\n\
## Decisions\nWhat was decided or learned, and why.\n\
## Files\nFiles read and files changed (path, and what changed).\n\
## Open tasks\nWhat remains to be done, and what was being done when the summary was written.\n\
Be specific (names, paths, commands, error messages). Do not invent anything.";

/// The model's answer after the summary, so that roles alternate.
const ACKNOWLEDGEMENT: &str =
    "Understood. I have the summary of our conversation so far and will continue from it.";

/// True when `tokens` pass the compaction threshold of `window`.
pub fn over_threshold(tokens: u64, window: u64) -> bool {
    tokens.saturating_mul(100) > window.saturating_mul(COMPACT_AT_PERCENT)
}

/// A compaction that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    /// Estimated prompt tokens before.
    pub tokens_before: u64,
    /// Estimated prompt tokens after.
    pub tokens_after: u64,
    /// Messages the summary replaced.
    pub summarized_messages: usize,
    /// Tokens the summary request used.
    pub usage: Usage,
}

/// Why a compaction did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactError {
    /// There is nothing old enough to summarize.
    #[error("there is nothing to compact yet")]
    NothingToCompact,
    /// The summary would not be shorter than what it replaces (a short conversation).
    #[error("the summary would not be shorter than the conversation it replaces")]
    NoGain,
    /// The user interrupted it.
    #[error("the compaction was interrupted")]
    Interrupted,
    /// The summary request failed.
    #[error("the summary request failed: {message}")]
    Failed {
        /// The error's kind.
        kind: ErrorKind,
        /// The provider's error, for people.
        message: String,
    },
}

/// Compacts the conversation of `state`: everything before the current turn (all of
/// it for [`CompactionTrigger::Manual`], which runs between turns) is summarized.
/// `focus` is what the user asked the summary to keep in view (`/compact focus`).
pub async fn compact(
    state: &mut SessionState,
    ctx: &TurnContext,
    trigger: CompactionTrigger,
    focus: Option<&str>,
) -> Result<Compaction, CompactError> {
    let specs = ctx.setup.tools.specs();
    let conv = &state.conversation;
    let tokens_before = conv.estimate_tokens(&specs);
    let keep_from = match trigger {
        CompactionTrigger::Manual => conv.messages().len(),
        CompactionTrigger::Threshold | CompactionTrigger::Rejection => {
            conv.current_turn_start(conv.turn())
        }
    };
    let older = &conv.messages()[1..keep_from];
    let only_a_summary = older.len() <= SUMMARY_MESSAGES && older.iter().all(is_summary_message);
    if older.is_empty() || only_a_summary {
        return Err(CompactError::NothingToCompact);
    }
    let window = ctx
        .setup
        .context_window
        .get()
        .unwrap_or(tokens_before.max(4096));
    let mut transcript_bytes = bytes_for(window * TRANSCRIPT_PERCENT / 100);
    let transcript = render_transcript(older);
    let mut usage = Usage::default();
    let summary = loop {
        let mut prompt = truncate_head_tail(&transcript, transcript_bytes);
        prompt.push_str("\n\nWrite the summary of the conversation above.");
        if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
            prompt.push_str(&format!(
                " The user asks you to keep this in view: {}",
                focus.trim()
            ));
        }
        let messages = [
            Message::System {
                content: SUMMARIZER_PROMPT.to_string(),
            },
            Message::User { content: prompt },
        ];
        let request = ChatRequest {
            model: &state.model,
            messages: &messages,
            tools: &[],
        };
        match ctx
            .setup
            .client
            .complete(request, &ctx.cancel, &mut |_| {})
            .await
        {
            Ok(c) => {
                if let Some(u) = c.usage {
                    usage.add(&ctx.setup.prices.priced(&state.model, u));
                }
                break c.text;
            }
            Err(_) if ctx.cancel.is_cancelled() => return Err(CompactError::Interrupted),
            Err(e) if e.kind() == ErrorKind::ContextTooLong && transcript_bytes > 8192 => {
                transcript_bytes /= 2;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {
                return Err(CompactError::Interrupted);
            }
            Err(e) => {
                return Err(CompactError::Failed {
                    kind: e.kind(),
                    message: e.to_string(),
                });
            }
        }
    };
    if summary.trim().is_empty() {
        return Err(CompactError::Failed {
            kind: ErrorKind::Protocol,
            message: "the model wrote an empty summary".into(),
        });
    }

    let (kept, left_out) = keep_user_messages(
        state.conversation.user_messages_before(keep_from),
        bytes_for(window * USER_MESSAGES_PERCENT / 100),
    );
    let skills = skill_instructions(older, ctx);
    let content = summary_message(summary.trim(), &kept, left_out, &skills);
    let replacement = vec![
        Message::User { content },
        Message::Assistant {
            content: ACKNOWLEDGEMENT.to_string(),
            reasoning: None,
            tool_calls: Vec::new(),
        },
    ];
    if estimate_messages(&replacement)
        >= estimate_messages(&state.conversation.messages()[1..keep_from])
    {
        return Err(CompactError::NoGain);
    }
    let summarized_messages = keep_from - 1;
    let conv = &mut state.conversation;
    let (_, mut tokens_after) =
        conv.replace_with_summary(keep_from, replacement, kept, trigger, tokens_before, &specs);
    // One turn alone can fill the window (many large tool results): its older results
    // go too, the latest stays.
    if over_threshold(tokens_after, window) {
        let tools = &ctx.setup.tools;
        let kinds = |name: &str| tools.output_kind(name);
        if conv.elide_current_turn(1, &kinds) > 0 {
            tokens_after = conv.estimate_tokens(&specs);
        }
    }
    Ok(Compaction {
        tokens_before,
        tokens_after,
        summarized_messages,
        usage,
    })
}

/// Runs [`compact`] and reports it: an [`Event::Compacted`] when it happened, the
/// summary request's usage added to the session. Returns the compaction or why not.
pub async fn compact_and_report(
    state: &mut SessionState,
    ctx: &TurnContext,
    trigger: CompactionTrigger,
    focus: Option<&str>,
) -> Result<Compaction, CompactError> {
    let result = compact(state, ctx, trigger, focus).await;
    if let Ok(c) = &result {
        state.usage.add(&c.usage);
        ctx.emit(Event::Compacted {
            trigger,
            tokens_before: c.tokens_before,
            tokens_after: c.tokens_after,
            summarized_messages: c.summarized_messages,
        });
    }
    for message in state.conversation.take_warnings() {
        ctx.emit(Event::Warning { message });
    }
    result
}

/// Bytes of text that make about `tokens` tokens (at the usual 4 bytes per token, a
/// little less to stay on the safe side).
fn bytes_for(tokens: u64) -> usize {
    usize::try_from(tokens.saturating_mul(7) / 2).unwrap_or(usize::MAX)
}

fn is_summary_message(message: &Message) -> bool {
    match message {
        Message::User { content } => content.starts_with(SUMMARY_OPENING),
        Message::Assistant { content, .. } => content == ACKNOWLEDGEMENT,
        _ => false,
    }
}

/// How a summary message starts.
const SUMMARY_OPENING: &str = "[This conversation was compacted.";

/// The older messages as text for the summarizer: roles, answers, calls, shortened
/// tool results.
fn render_transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        match m {
            Message::System { .. } => {}
            Message::User { content } => {
                out.push_str("### User\n");
                out.push_str(content);
                out.push_str("\n\n");
            }
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                out.push_str("### Assistant\n");
                if !content.is_empty() {
                    out.push_str(content);
                    out.push('\n');
                }
                for c in tool_calls {
                    let args: String = c.arguments.chars().take(400).collect();
                    out.push_str(&format!("(calls {} {args})\n", c.name));
                }
                out.push('\n');
            }
            Message::Tool { content, .. } => {
                out.push_str("### Tool result\n");
                out.push_str(&truncate_head_tail(content, TOOL_RESULT_BYTES));
                out.push_str("\n\n");
            }
        }
    }
    out
}

/// The newest user messages that fit `budget` bytes, oldest first, and how many older
/// ones were left to the summary.
fn keep_user_messages(messages: Vec<String>, budget: usize) -> (Vec<String>, usize) {
    let mut used = 0usize;
    let mut kept = Vec::new();
    let total = messages.len();
    for m in messages.into_iter().rev() {
        if used + m.len() > budget {
            break;
        }
        used += m.len();
        kept.push(m);
    }
    kept.reverse();
    let left_out = total - kept.len();
    (kept, left_out)
}

/// The instructions of every skill still loaded: the `<skill-loaded>` block the model
/// was given (found in the older messages), else the skill's body from the catalog.
fn skill_instructions(older: &[Message], ctx: &TurnContext) -> Vec<String> {
    let mut out = Vec::new();
    for name in ctx.setup.loaded_skills.names() {
        let open = format!("<skill-loaded name=\"{name}\">");
        let found = older.iter().find_map(|m| {
            let (Message::Tool { content, .. } | Message::User { content }) = m else {
                return None;
            };
            let start = content.find(&open)?;
            let rest = &content[start..];
            let end = rest.find("</skill-loaded>")? + "</skill-loaded>".len();
            Some(rest[..end].to_string())
        });
        let block = found.or_else(|| {
            let body = ctx.setup.catalog.current().get(&name)?.load_body().ok()?;
            Some(format!("{open}\n{body}\n</skill-loaded>"))
        });
        if let Some(block) = block {
            out.push(block);
        }
    }
    out
}

/// The user message that replaces the summarized conversation.
fn summary_message(summary: &str, kept: &[String], left_out: usize, skills: &[String]) -> String {
    let mut out = format!(
        "{SUMMARY_OPENING} Earlier messages were replaced by this summary; the full record \
         is in the saved session.]\n\n<summary>\n{summary}\n</summary>"
    );
    if !kept.is_empty() {
        out.push_str("\n\nThe user's messages so far, word for word, oldest first");
        if left_out > 0 {
            out.push_str(&format!(
                " ({left_out} earlier ones are covered by the summary)"
            ));
        }
        out.push_str(":\n");
        for m in kept {
            out.push_str("<user_message>\n");
            out.push_str(m);
            out.push_str("\n</user_message>\n");
        }
    }
    if !skills.is_empty() {
        out.push_str("\nSkills still loaded; their instructions remain in force:\n");
        for s in skills {
            out.push_str(s);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;

    #[test]
    fn the_threshold_is_85_percent() {
        assert!(!over_threshold(85, 100));
        assert!(over_threshold(86, 100));
        assert!(!over_threshold(u64::MAX / 2, u64::MAX / 2));
    }

    #[test]
    fn the_newest_user_messages_that_fit_are_kept_word_for_word() {
        let messages = vec!["a".repeat(50), "b".repeat(30), "c".repeat(30)];
        let (kept, left_out) = keep_user_messages(messages, 70);
        assert_eq!(kept, vec!["b".repeat(30), "c".repeat(30)]);
        assert_eq!(left_out, 1);
    }

    #[test]
    fn the_summary_message_has_the_summary_the_messages_and_the_skills() {
        let text = summary_message(
            "## Goal\nship",
            &["never touch main.rs".into()],
            2,
            &["<skill-loaded name=\"x\">\ndo X\n</skill-loaded>".into()],
        );
        assert!(text.starts_with(SUMMARY_OPENING));
        assert_contains(&text, "## Goal\nship");
        assert_contains(
            &text,
            "<user_message>\nnever touch main.rs\n</user_message>",
        );
        assert_contains(&text, "(2 earlier ones are covered by the summary)");
        assert_contains(&text, "do X");
        assert!(is_summary_message(&Message::User { content: text }));
    }

    #[test]
    fn the_transcript_shortens_tool_results_and_shows_calls() {
        let text = render_transcript(&[
            Message::User {
                content: "fix it".into(),
            },
            Message::Assistant {
                content: String::new(),
                reasoning: None,
                tool_calls: vec![crate::llm::ToolCall {
                    id: "1".into(),
                    name: "bash".into(),
                    arguments: r#"{"command":"ls"}"#.into(),
                }],
            },
            Message::Tool {
                tool_call_id: "1".into(),
                content: "x".repeat(10_000),
            },
        ]);
        assert_contains(&text, "### User\nfix it");
        assert!(text.contains(r#"(calls bash {"command":"ls"})"#));
        assert!(text.len() < 2500, "{}", text.len());
    }
}
