//! Compaction: when the conversation nears the context window (or the user asks, or the
//! provider refused a request as too long), the model writes a structured summary of the
//! older messages and the conversation sent from then on is that summary, the user's own
//! messages word for word (within a budget), the instructions of the skills still loaded,
//! and the current turn. The system prompt is untouched and the saved session keeps
//! every original message.
//!
//! What the summary request sends is bounded by the window: the transcript takes at most
//! [`TRANSCRIPT_PERCENT`] of it (the summarizer's instructions and the user's focus
//! included), and the summary written back at most [`SUMMARY_PERCENT`].
//!
//! It owns the summary request and the shape of the summary message. It must not know
//! how the conversation is stored or how the compaction is shown.

use crate::agent::conversation::{Conversation, FILL_PERCENT, SUMMARY_MESSAGES, estimate_messages};
use crate::agent::turn::{SessionState, TurnContext};
use crate::llm::{ChatRequest, Message};
use crate::protocol::{CompactionTrigger, ErrorKind, Event, Usage};
use crate::truncate::{truncate_head_tail, truncate_noting};

/// Compaction starts before a request would pass this share of the window (percent).
pub const COMPACT_AT_PERCENT: u64 = FILL_PERCENT;

/// The share of the window (percent) the user's verbatim messages may take.
const USER_MESSAGES_PERCENT: u64 = 10;

/// The share of the window (percent) the summary request may take (instructions, focus
/// and transcript); the rest is the summarizer's room to answer.
pub const TRANSCRIPT_PERCENT: u64 = 50;

/// The share of the window (percent) the summary written back may take; a longer one is
/// cut (head and tail).
pub const SUMMARY_PERCENT: u64 = 15;

/// Bytes of the user's `/compact` focus sent to the summarizer.
const FOCUS_BYTES: usize = 1000;

/// The smallest transcript a refused summary request is asked again with.
const MIN_TRANSCRIPT_BYTES: usize = 1024;

/// Bytes the summary message adds around each verbatim user message.
const USER_MESSAGE_WRAPPING: usize = "<user_message>\n\n</user_message>\n".len();

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
    let mut ask = String::from("\n\nWrite the summary of the conversation above.");
    if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
        ask.push_str(" The user asks you to keep this in view: ");
        ask.push_str(&truncate_head_tail(focus.trim(), FOCUS_BYTES));
    }
    let request_bytes = budget_bytes(conv, window * TRANSCRIPT_PERCENT / 100);
    let mut transcript_bytes = request_bytes
        .saturating_sub(SUMMARIZER_PROMPT.len() + ask.len())
        .max(MIN_TRANSCRIPT_BYTES);
    let transcript = render_transcript(older);
    let mut usage = Usage::default();
    let summary = loop {
        let mut prompt = truncate_head_tail(&transcript, transcript_bytes);
        prompt.push_str(&ask);
        let messages = [
            Message::System {
                content: SUMMARIZER_PROMPT.to_string(),
            },
            Message::user(prompt),
        ];
        let request = ChatRequest {
            model: &state.model,
            messages: &messages,
            tools: &[],
            effort: state.effort,
            cache_key: Some(&state.cache_key),
            images: &crate::images::NO_IMAGES,
            output_schema: None,
        };
        match ctx
            .setup
            .client
            .client()
            .complete(request, &ctx.cancel, &mut |_| {})
            .await
        {
            Ok(c) => {
                if let Some(u) = c.usage {
                    usage.add(&ctx.setup.client.priced(&state.model, u));
                }
                break c.text;
            }
            Err(_) if ctx.cancel.is_cancelled() => return Err(CompactError::Interrupted),
            Err(e)
                if e.kind() == ErrorKind::ContextTooLong
                    && transcript_bytes > MIN_TRANSCRIPT_BYTES =>
            {
                transcript_bytes = (transcript_bytes / 2).max(MIN_TRANSCRIPT_BYTES);
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
        budget_bytes(&state.conversation, window * USER_MESSAGES_PERCENT / 100),
    );
    let skills = skill_instructions(older, ctx);
    let summary = truncate_noting(
        summary.trim(),
        budget_bytes(&state.conversation, window * SUMMARY_PERCENT / 100),
        " from the summary to keep it small",
    );
    let mut content = summary_message(&summary, &kept, left_out, &skills);
    // The summary replaces the older messages, their images with them: oldest first,
    // they are the first to go, and the model and the user are told.
    let dropped: Vec<&str> = state.conversation.messages()[1..keep_from]
        .iter()
        .flat_map(Message::images)
        .map(|image| image.name.as_str())
        .collect();
    if !dropped.is_empty() {
        let note = format!(
            "{} image(s) of the earlier messages were dropped by this compaction: {}",
            dropped.len(),
            dropped.join(", ")
        );
        content.push_str(&format!("\n\n[{note}]"));
        ctx.emit(Event::Warning { message: note });
    }
    let replacement = vec![
        Message::user(content),
        Message::Assistant {
            content: ACKNOWLEDGEMENT.into(),
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
    // One turn alone can still fill the window (many large tool results): the turn makes
    // room in it before its next request (`fit.rs`).
    let (_, tokens_after) =
        conv.replace_with_summary(keep_from, replacement, kept, trigger, tokens_before, &specs);
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
    super::hooks_session::pre_compact(ctx, trigger, focus).await;
    let result = compact(state, ctx, trigger, focus).await;
    if let Ok(c) = &result {
        state.usage.add(&c.usage);
        ctx.emit(Event::Compacted {
            trigger,
            tokens_before: c.tokens_before,
            tokens_after: c.tokens_after,
            summarized_messages: c.summarized_messages,
        });
        super::hooks_session::post_compact(state, ctx, trigger).await;
    }
    for message in state.conversation.take_warnings() {
        ctx.emit(Event::Warning { message });
    }
    result
}

/// Bytes of text that make about `tokens` tokens (by what the provider's counts showed,
/// an eighth less to stay on the safe side).
fn budget_bytes(conv: &Conversation, tokens: u64) -> usize {
    conv.bytes_of(tokens) / 8 * 7
}

fn is_summary_message(message: &Message) -> bool {
    match message {
        Message::User { content, .. } => content.starts_with(SUMMARY_OPENING),
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
            Message::User { content, .. } => {
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
        let size = m.len() + USER_MESSAGE_WRAPPING;
        if used + size > budget {
            break;
        }
        used += size;
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
            let (Message::Tool { content, .. } | Message::User { content, .. }) = m else {
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
        // Each message counts with the tags around it (31 bytes).
        let (kept, left_out) = keep_user_messages(messages, 130);
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
        assert!(is_summary_message(&Message::user(text)));
    }

    #[test]
    fn the_transcript_shortens_tool_results_and_shows_calls() {
        let text = render_transcript(&[
            Message::User {
                images: Vec::new(),
                content: "fix it".into(),
            },
            Message::Assistant {
                content: Default::default(),
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
