//! Room in the context window for what comes next: how many tokens the next request may
//! still grow by before it passes the fill line, and what is given up, oldest first, to
//! make room ([`Shed`]): whole tool results of earlier turns, this turn's own earlier
//! results (both replaced by the elision marker), and this turn's earlier calls with
//! their results, removed and named in one note at the start of the turn's first answer
//! that is left. The note names calls the model chose (arguments included), so it stays
//! in the model's own role: a user message is never changed.
//!
//! It knows the conversation's messages and estimates; it does not decide when room is
//! made or how much a result may take (`agent/fit.rs` does), and it sends nothing.

use super::{Conversation, ELIDED_PREFIX, OutputKinds, call_index, elide_at};
use crate::llm::{Message, ToolSpec};
use crate::tools::OutputKind;

/// The share of the window (percent) a request is kept under; past it, room is made
/// before the request is sent (compaction among other things).
pub const FILL_PERCENT: u64 = 85;

/// Tool results up to this size are not elided to make room (the marker is about half
/// of it); smaller ones go with their call when calls are folded.
const SHED_MIN_BYTES: usize = 256;

/// The share of the window (percent) the fold note may take: it names the newest calls
/// that fit and counts the older ones.
const FOLD_NOTE_PERCENT: u64 = 5;

/// Characters of a call's arguments the fold note keeps.
const FOLD_ARGS_CHARS: usize = 80;

/// What is given up to make room, each oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shed {
    /// Whole tool results of earlier turns: elided.
    EarlierOutput,
    /// This turn's tool results, but the latest `keep`: elided.
    TurnOutput {
        /// The latest results left whole.
        keep: usize,
    },
    /// This turn's calls, but the latest `keep` answers that made calls: each answer
    /// with its results removed, and named in the note on the turn's first message. An
    /// answer whose results include instructions (a loaded skill) is never removed.
    TurnCalls {
        /// The latest answers with calls left in place.
        keep: usize,
    },
}

/// The calls of the current turn removed so far, for the note.
#[derive(Debug, Default)]
pub(super) struct Folded {
    /// The turn they belong to.
    turn: u64,
    /// Bytes of the note at the start of the turn's first answer with calls.
    note_len: usize,
    /// Each removed call, `name arguments`, oldest first.
    calls: Vec<String>,
}

impl Conversation {
    /// The context window in tokens, when known.
    pub fn window(&self) -> Option<u64> {
        self.window
    }

    /// The fill line in tokens, when the window is known.
    pub fn fill_line(&self) -> Option<u64> {
        self.window.map(|w| w.saturating_mul(FILL_PERCENT) / 100)
    }

    /// Tokens the next request may grow by before it passes the fill line (negative:
    /// it is over by that much); `None` when the window is not known.
    pub fn room(&self, specs: &[ToolSpec]) -> Option<i64> {
        let line = self.fill_line()?;
        let used = self.estimate_tokens(specs);
        Some(i64::try_from(line).unwrap_or(i64::MAX) - i64::try_from(used).unwrap_or(i64::MAX))
    }

    /// About how many bytes of text make `tokens` tokens (by what the provider's counts
    /// showed).
    pub fn bytes_of(&self, tokens: u64) -> usize {
        let bytes = tokens as f64 * 4.0 / self.calibration;
        // Saturating conversion: a float beyond usize becomes usize::MAX.
        bytes as usize
    }

    /// About how many tokens `bytes` bytes of text make.
    pub fn tokens_of(&self, bytes: usize) -> u64 {
        (bytes as f64 / 4.0 * self.calibration).ceil() as u64
    }

    /// Tokens of the messages before the current turn (what a compaction could
    /// summarize), system prompt excluded.
    pub fn earlier_tokens(&self) -> u64 {
        let start = self.current_turn_start(self.turn).max(1);
        self.tokens_of(bytes_of_messages(&self.messages[1..start]))
    }

    /// Gives up what `step` names, oldest first, until the next request has at least
    /// `room` tokens of room or nothing of that kind is left. Returns how many messages
    /// were elided or removed.
    pub fn shed(
        &mut self,
        step: Shed,
        room: i64,
        specs: &[ToolSpec],
        kinds: OutputKinds<'_>,
    ) -> usize {
        let Some(now) = self.room(specs) else {
            return 0;
        };
        if now >= room {
            return 0;
        }
        let deficit = u64::try_from(room - now).unwrap_or(0);
        let need = self.bytes_of(deficit).max(1);
        let changed = match step {
            Shed::EarlierOutput => {
                let end = self.current_turn_start(self.turn);
                self.elide_range(1..end, 0, need, kinds)
            }
            Shed::TurnOutput { keep } => {
                let start = self.current_turn_start(self.turn);
                self.elide_range(start..self.messages.len(), keep, need, kinds)
            }
            Shed::TurnCalls { keep } => self.fold_calls(keep, need, kinds),
        };
        if changed > 0 {
            self.measure = None;
        }
        changed
    }

    /// Elides large tool results in `range`, oldest first and but the latest `keep`,
    /// until `need` bytes are freed. Returns how many.
    fn elide_range(
        &mut self,
        range: std::ops::Range<usize>,
        keep: usize,
        need: usize,
        kinds: OutputKinds<'_>,
    ) -> usize {
        let tools: Vec<usize> = range.filter(|&i| elidable(&self.messages[i])).collect();
        let upto = tools.len().saturating_sub(keep);
        if upto == 0 {
            return 0;
        }
        let calls = call_index(&self.messages);
        let (mut freed, mut n) = (0usize, 0usize);
        for &i in &tools[..upto] {
            if freed >= need {
                break;
            }
            let before = message_bytes(&self.messages[i]);
            if elide_at(
                &mut self.messages[i],
                SHED_MIN_BYTES,
                &calls,
                kinds,
                &self.attached,
            ) {
                freed += before.saturating_sub(message_bytes(&self.messages[i]));
                n += 1;
            }
        }
        n
    }

    /// Removes this turn's answers with calls (and their results), oldest first and but
    /// the latest `keep`, until `need` bytes are freed; names them in the note at the
    /// start of the turn's first answer with calls that is left. Returns how many
    /// messages were removed.
    fn fold_calls(&mut self, keep: usize, need: usize, kinds: OutputKinds<'_>) -> usize {
        let start = self.current_turn_start(self.turn);
        if self.folded.turn != self.turn {
            self.folded = Folded {
                turn: self.turn,
                note_len: 0,
                calls: Vec::new(),
            };
        }
        let answers = self.answers_with_calls(start);
        let upto = answers.len().saturating_sub(keep);
        let note_before = self.fold_note().len();
        let mut removed_bytes = 0usize;
        let mut remove: Vec<usize> = Vec::new();
        for &a in &answers[..upto] {
            if removed_bytes >= need + self.fold_note().len().saturating_sub(note_before) {
                break;
            }
            let Message::Assistant { tool_calls, .. } = &self.messages[a] else {
                continue;
            };
            let ids: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
            let results: Vec<usize> = (a + 1..self.messages.len())
                .take_while(|&i| matches!(&self.messages[i], Message::Tool { .. }))
                .filter(|&i| matches!(&self.messages[i], Message::Tool { tool_call_id, .. } if ids.contains(&tool_call_id.as_str())))
                .collect();
            let instructions = tool_calls
                .iter()
                .any(|c| kinds(&c.name) == OutputKind::Instructions);
            if instructions || results.len() != tool_calls.len() {
                continue;
            }
            for c in tool_calls {
                let args: String = c.arguments.chars().take(FOLD_ARGS_CHARS).collect();
                let more = if args.len() < c.arguments.len() {
                    "…"
                } else {
                    ""
                };
                self.folded.calls.push(format!("{} {args}{more}", c.name));
            }
            removed_bytes += message_bytes(&self.messages[a]);
            removed_bytes += results
                .iter()
                .map(|&i| message_bytes(&self.messages[i]))
                .sum::<usize>();
            remove.push(a);
            remove.extend(results);
        }
        if remove.is_empty() {
            return 0;
        }
        // The note moves: off the answer that holds it (when that one stays), onto the
        // first answer left.
        let note_len = self.folded.note_len;
        if let Some(&holder) = answers.first().filter(|a| !remove.contains(a))
            && let Some(Message::Assistant { content, .. }) = self.messages.get_mut(holder)
        {
            let content = content.make_mut();
            content.drain(..note_len.min(content.len()));
        }
        let mut index = 0;
        self.messages.retain(|_| {
            let keep = !remove.contains(&index);
            index += 1;
            keep
        });
        let mut index = 0;
        self.turns.retain(|_| {
            let keep = !remove.contains(&index);
            index += 1;
            keep
        });
        let mut note = self.fold_note();
        self.folded.note_len = 0;
        if let Some(&holder) = self.answers_with_calls(start).first()
            && let Some(Message::Assistant { content, .. }) = self.messages.get_mut(holder)
        {
            if !content.is_empty() {
                note.push_str("\n\n");
            }
            content.make_mut().insert_str(0, &note);
            self.folded.note_len = note.len();
        }
        self.settled = self.settled.min(self.messages.len());
        remove.len()
    }

    /// The indices of the answers with calls from `start` on.
    fn answers_with_calls(&self, start: usize) -> Vec<usize> {
        (start..self.messages.len())
            .filter(|&i| matches!(&self.messages[i], Message::Assistant { tool_calls, .. } if !tool_calls.is_empty()))
            .collect()
    }

    /// The note that names the calls removed from the current turn ("" when none): the
    /// newest that fit its share of the window, the older ones counted.
    fn fold_note(&self) -> String {
        let calls = &self.folded.calls;
        if calls.is_empty() {
            return String::new();
        }
        let budget = self
            .window
            .map_or(usize::MAX, |w| self.bytes_of(w * FOLD_NOTE_PERCENT / 100));
        let mut used = 0;
        let shown = calls
            .iter()
            .rev()
            .take_while(|c| {
                used += c.len() + 2;
                used <= budget
            })
            .count()
            .max(1);
        let mut note = String::from(
            "[To fit the context window, earlier calls of this turn were removed with their \
             results: ",
        );
        let hidden = calls.len() - shown;
        if hidden > 0 {
            note.push_str(&format!("{hidden} calls, then "));
        }
        note.push_str(&calls[hidden..].join("; "));
        note.push_str(". A call can be made again when its output is needed.]");
        note
    }
}

/// A tool result that eliding to make room would shorten.
fn elidable(message: &Message) -> bool {
    matches!(message, Message::Tool { content, .. }
        if content.len() > SHED_MIN_BYTES && !content.starts_with(ELIDED_PREFIX))
}

/// Bytes a message counts for in the estimates.
fn message_bytes(message: &Message) -> usize {
    bytes_of_messages(std::slice::from_ref(message))
}

/// Bytes messages count for in the estimates (see [`super::estimate_messages`]).
fn bytes_of_messages(messages: &[Message]) -> usize {
    usize::try_from(super::estimate_messages(messages)).unwrap_or(usize::MAX) * 4
}
