//! The conversation as it is sent to the model, and as it is saved. Every message goes
//! through [`Conversation::push`], which appends a record to the session file (when the
//! session is saved) and to what the next request sends.
//!
//! What is sent stays bounded by the context window, not by the length of the session:
//! large tool results older than the last few turns are replaced by a short marker, and
//! when a turn ends the whole output of the turns so far is kept within a share of the
//! window (the oldest elided, the newest cut to what is left); a failed turn's messages
//! are left out, and compaction ([`super::compact`]) replaces old messages by a summary.
//! Room for what comes next is made in `conversation_room.rs` ([`Shed`]). The file keeps
//! everything; memory keeps only what is sent. [`Replayer`] rebuilds the same view from
//! a saved file, applying the same turn-end rules.
//!
//! It must not know where records are stored, how the summary is written or how
//! anything is drawn.

use std::collections::{HashMap, VecDeque};

use crate::llm::{Message, ToolSpec};
use crate::protocol::{CompactionTrigger, HistoryItem, TurnOutcome};
use crate::sessions::{NoteKind, Record};
use crate::tools::OutputKind;
use crate::truncate::truncate_noting;

#[path = "conversation_room.rs"]
mod room;
pub use room::{FILL_PERCENT, Shed};

#[path = "conversation_attached.rs"]
mod attached;

#[path = "conversation_replay.rs"]
mod replay;
pub use replay::{Replayed, Replayer};

/// Turns whose tool results are always sent whole: the current one and the ones before.
pub const KEEP_RECENT_TURNS: u64 = 3;

/// The share of the window (percent) that whole tool results of the turns so far may
/// take when a turn ends; beyond it the oldest are elided even within the last few
/// turns, and the newest is cut to what is left.
pub const RECENT_OUTPUT_PERCENT: u64 = 15;

/// Said in the marker of a result cut when its turn ended.
const CUT_AT_TURN_END: &str = " to keep the conversation small; call the tool again for a part \
     of it (read_file with offset and limit, grep, a command that filters its output)";

/// Tool results up to this size are never elided (a marker would save little).
pub const ELIDE_MIN_BYTES: usize = 2048;

/// How an elided tool result starts (so it is never elided twice).
pub const ELIDED_PREFIX: &str = "[elided:";

/// Messages a compaction puts first: the summary (a user message) and the model's
/// acknowledgement, so that roles still alternate for strict chat templates.
pub const SUMMARY_MESSAGES: usize = 2;

/// Where a conversation's records go: a session file, or a test's list.
pub trait RecordSink: Send + Sync {
    /// Appends one record; the error says why it could not be saved.
    fn append(&mut self, record: &Record) -> Result<(), String>;

    /// Appends a `message` record; a file sink writes it without copying the message.
    fn append_message(&mut self, turn: u64, message: &Message) -> Result<(), String> {
        self.append(&Record::Message {
            turn,
            message: message.clone(),
        })
    }

    /// The file the records go to, when there is one (hooks' `transcript_path`); a
    /// file created with the first record has its path before it exists.
    fn path(&self) -> Option<std::path::PathBuf> {
        None
    }
}

/// The tool kinds of a session, by tool name (for elision).
pub type OutputKinds<'a> = &'a dyn Fn(&str) -> OutputKind;

/// Provider-reported prompt tokens for the first `messages` messages.
#[derive(Debug, Clone, Copy)]
struct Measure {
    tokens: u64,
    messages: usize,
}

/// The conversation sent to the model (system prompt first) and its recorder.
pub struct Conversation {
    messages: Vec<Message>,
    /// The turn of each message (0 for the system prompt and compaction summaries).
    turns: Vec<u64>,
    turn: u64,
    sink: Option<Box<dyn RecordSink>>,
    prompt_recorded: bool,
    measure: Option<Measure>,
    /// Provider tokens per estimated token, learned from the last measure.
    calibration: f64,
    /// The user's messages kept word for word by the last compaction.
    kept_user_messages: Vec<String>,
    /// Skills recorded as loaded, in load order.
    recorded_skills: Vec<String>,
    /// Messages before this index have been checked for elision.
    settled: usize,
    /// Bytes that whole tool results of earlier turns may take (from the window).
    output_budget: Option<usize>,
    /// The context window in tokens, when known.
    window: Option<u64>,
    /// Calls of the current turn removed to make room, for the note that names them.
    folded: room::Folded,
    warnings: Vec<String>,
    /// Notes for the model's next user message (a `!` command's output, an undo).
    notes: Vec<String>,
    /// Notes taken for the user message about to be pushed.
    taken_notes: Vec<String>,
    /// The notes each turn's user message carried: a rewind to that turn gives them
    /// back, since what they told of happened before it.
    delivered: HashMap<u64, Vec<String>>,
    /// What the user typed for the next turn, recorded when it begins.
    next_prompt: Option<String>,
    /// What the user typed for each turn still sent, oldest first (the rewind points).
    prompts: Vec<(u64, String)>,
    /// Turns up to this one can no longer be rewound to (cleared or summarized).
    rewind_floor: u64,
    /// Instruction files attached to tool results (see `conversation_attached.rs`).
    attached: Vec<attached::Attached>,
}

impl std::fmt::Debug for Conversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversation")
            .field("messages", &self.messages.len())
            .field("turn", &self.turn)
            .field("saved", &self.sink.is_some())
            .finish()
    }
}

impl Conversation {
    /// A new conversation with this system prompt; records go to `sink` (none: not
    /// saved, as in a forked skill's sub-agent).
    pub fn new(system_prompt: String, sink: Option<Box<dyn RecordSink>>) -> Self {
        Conversation {
            messages: vec![Message::System {
                content: system_prompt,
            }],
            turns: vec![0],
            turn: 0,
            sink,
            prompt_recorded: false,
            measure: None,
            calibration: 1.0,
            kept_user_messages: Vec::new(),
            recorded_skills: Vec::new(),
            settled: 1,
            output_budget: None,
            window: None,
            folded: room::Folded::default(),
            warnings: Vec::new(),
            notes: Vec::new(),
            taken_notes: Vec::new(),
            delivered: HashMap::new(),
            next_prompt: None,
            prompts: Vec::new(),
            rewind_floor: 0,
            attached: Vec::new(),
        }
    }

    /// Tells the conversation the model's context window, which bounds how much whole
    /// tool output of earlier turns is sent and how much room the next request has.
    pub fn set_window(&mut self, window: Option<u64>) {
        self.window = window;
        self.output_budget = window.map(|w| {
            usize::try_from(w.saturating_mul(4) * RECENT_OUTPUT_PERCENT / 100).unwrap_or(usize::MAX)
        });
    }

    /// What the next request sends, system prompt first.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The system prompt.
    pub fn system_prompt(&self) -> &str {
        match self.messages.first() {
            Some(Message::System { content }) => content,
            _ => "",
        }
    }

    /// The current turn (0 before the first).
    pub fn turn(&self) -> u64 {
        self.turn
    }

    /// The session's record file, when it is saved to one.
    pub fn record_path(&self) -> Option<std::path::PathBuf> {
        self.sink.as_ref().and_then(|sink| sink.path())
    }

    /// Whether records are saved.
    pub fn is_saved(&self) -> bool {
        self.sink.is_some()
    }

    /// Warnings to show (a session file that could not be written), once.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Appends a record to the session file. A write that fails stops saving, with one
    /// warning; the conversation goes on.
    pub fn record(&mut self, record: Record) {
        self.save(|sink| sink.append(&record));
    }

    /// Runs `write` on the sink, the system prompt first if it is not saved yet.
    fn save(&mut self, write: impl FnOnce(&mut dyn RecordSink) -> Result<(), String>) {
        if self.sink.is_some() && !self.prompt_recorded {
            self.prompt_recorded = true;
            let prompt = Record::SystemPrompt {
                prompt: self.system_prompt().to_string(),
            };
            if let Some(Err(e)) = self.sink.as_mut().map(|sink| sink.append(&prompt)) {
                self.stop_saving(e);
            }
        }
        if let Some(Err(e)) = self.sink.as_mut().map(|sink| write(sink.as_mut())) {
            self.stop_saving(e);
        }
    }

    fn stop_saving(&mut self, error: String) {
        self.sink = None;
        self.warnings.push(format!(
            "the session is no longer saved: {error}; the conversation goes on in memory"
        ));
    }

    /// Starts the next turn.
    pub fn begin_turn(&mut self) -> u64 {
        self.turn += 1;
        self.turn
    }

    /// A user message is pushed: what the user typed for it ([`Self::expect_prompt`],
    /// else the message itself) is the turn's rewind point, recorded when it differs
    /// from the message (notes before it, mentions attached, a skill's body).
    fn note_prompt(&mut self, content: &str) {
        let typed = self
            .next_prompt
            .take()
            .unwrap_or_else(|| content.to_string());
        if self.prompts.last().is_some_and(|(t, _)| *t == self.turn) {
            return;
        }
        if typed != content {
            self.record(Record::Prompt {
                turn: self.turn,
                text: typed.clone(),
            });
        }
        self.prompts.push((self.turn, typed));
    }

    /// Says what the user typed for the turn about to begin (a prompt as typed, `/name
    /// args`): the rewind picker offers it (see `note_prompt`).
    pub fn expect_prompt(&mut self, typed: String) {
        self.next_prompt = Some(typed);
    }

    /// Saves the plan `update_plan` set (a resumed session shows the last one again).
    pub fn record_plan(&mut self, plan: &crate::protocol::PlanUpdate) {
        self.record(Record::Plan { plan: plan.clone() });
    }

    /// Adds a note for the model's next user message (saved, so a resumed session
    /// still delivers it).
    pub fn add_note(&mut self, kind: NoteKind, text: String) {
        self.record(Record::Note {
            kind,
            text: text.clone(),
        });
        self.notes.push(text);
    }

    /// The notes for the model not yet delivered, joined, once: the next user message
    /// pushed carries them.
    pub fn take_notes(&mut self) -> Option<String> {
        let notes = std::mem::take(&mut self.notes);
        let joined = (!notes.is_empty()).then(|| notes.join("\n\n"));
        self.taken_notes.extend(notes);
        joined
    }

    /// The notes taken belong to the user message of the current turn.
    fn deliver_notes(&mut self) {
        if !self.taken_notes.is_empty() {
            let notes = std::mem::take(&mut self.taken_notes);
            self.delivered.entry(self.turn).or_default().extend(notes);
        }
    }

    /// The earlier turns the conversation can be rewound to, with what the user typed
    /// for each, oldest first (turns cleared or summarized away are not among them).
    pub fn rewind_points(&self) -> Vec<(u64, String)> {
        self.prompts
            .iter()
            .filter(|(turn, _)| *turn > self.rewind_floor)
            .cloned()
            .collect()
    }

    /// Rewinds to just before `turn` (one of [`Self::rewind_points`]): its messages and
    /// every later turn's are no longer sent (the file keeps them). Returns false, and
    /// does nothing, for a turn that is not a rewind point.
    pub fn rewind_to(&mut self, turn: u64) -> bool {
        if !self.rewind_points().iter().any(|(t, _)| *t == turn) {
            return false;
        }
        self.record(Record::Rewound { turn });
        self.apply_rewind(turn);
        true
    }

    fn apply_rewind(&mut self, turn: u64) {
        let before = self.messages.len();
        let mut index = 0;
        self.messages.retain(|_| {
            let keep = self.turns[index] < turn || self.turns[index] == 0;
            index += 1;
            keep
        });
        self.turns.retain(|t| *t < turn || *t == 0);
        self.prompts.retain(|(t, _)| *t < turn);
        // What the rewound message carried is news again; what later ones carried told
        // of what happened after it, which the rewind takes back.
        let mut back = self.delivered.remove(&turn).unwrap_or_default();
        self.delivered.retain(|t, _| *t < turn);
        back.append(&mut self.notes);
        self.notes = back;
        if self.messages.len() != before {
            self.measure = None;
            self.settled = self.settled.min(self.messages.len());
        }
    }

    /// Adds a message to the current turn (saved, then sent from the next request on).
    pub fn push(&mut self, message: Message) {
        let turn = self.turn;
        if let Message::User { content, .. } = &message {
            self.note_prompt(content);
            self.deliver_notes();
        }
        self.save(|sink| sink.append_message(turn, &message));
        self.messages.push(message);
        self.turns.push(self.turn);
    }

    /// Ends the current turn: saves how it ended, leaves a failed turn's messages out
    /// of what is sent next (returns how many), and elides large tool results that are
    /// now old.
    pub fn end_turn(&mut self, outcome: &TurnOutcome, kinds: OutputKinds<'_>) -> usize {
        self.record(Record::TurnEnd {
            turn: self.turn,
            outcome: outcome.clone(),
        });
        let dropped = match outcome {
            TurnOutcome::Failed { .. } => self.drop_turn(self.turn),
            _ => 0,
        };
        self.elide_old_outputs(kinds);
        self.elide_over_budget(kinds);
        dropped
    }

    /// Removes the messages of `turn` from what is sent.
    fn drop_turn(&mut self, turn: u64) -> usize {
        let before = self.messages.len();
        let mut index = 0;
        self.messages.retain(|_| {
            let keep = self.turns[index] != turn;
            index += 1;
            keep
        });
        self.turns.retain(|t| *t != turn);
        let dropped = before - self.messages.len();
        if dropped > 0 {
            self.measure = None;
            self.settled = self.settled.min(self.messages.len());
        }
        dropped
    }

    /// Notes the provider's prompt tokens for the request just made (over every message
    /// sent, tools included), so later estimates start from a real count.
    pub fn note_prompt_tokens(&mut self, tokens: u64, specs: &[ToolSpec]) {
        let estimate = estimate_messages(&self.messages) + estimate_specs(specs);
        if estimate > 0 && tokens > 0 {
            self.calibration = (tokens as f64 / estimate as f64).clamp(0.5, 4.0);
        }
        self.measure = Some(Measure {
            tokens,
            messages: self.messages.len(),
        });
    }

    /// About how many tokens the next request's prompt is: the provider's last count
    /// plus an estimate of what was added since, else a calibrated estimate.
    pub fn estimate_tokens(&self, specs: &[ToolSpec]) -> u64 {
        let calibrated = |n: u64| (n as f64 * self.calibration).ceil() as u64;
        match self.measure {
            Some(m) if m.messages <= self.messages.len() => {
                m.tokens + calibrated(estimate_messages(&self.messages[m.messages..]))
            }
            _ => calibrated(estimate_messages(&self.messages) + estimate_specs(specs)),
        }
    }

    /// Forgets the conversation (`/clear`); the system prompt stays.
    pub fn clear(&mut self) {
        self.record(Record::Cleared);
        self.rewind_floor = self.turn;
        self.prompts.clear();
        self.notes.clear();
        self.delivered.clear();
        self.messages.truncate(1);
        self.turns.truncate(1);
        self.kept_user_messages.clear();
        self.attached.clear();
        self.measure = None;
        self.settled = 1;
    }

    /// Records skills loaded or unloaded since the last call (`loaded` in load order).
    pub fn sync_skills(&mut self, loaded: &[String]) {
        let gone: Vec<String> = self
            .recorded_skills
            .iter()
            .filter(|s| !loaded.contains(s))
            .cloned()
            .collect();
        for name in gone {
            self.record(Record::SkillUnloaded { name });
        }
        for name in loaded {
            if !self.recorded_skills.contains(name) {
                self.record(Record::SkillLoaded { name: name.clone() });
            }
        }
        self.recorded_skills = loaded.to_vec();
    }

    /// The user's messages a compaction may keep word for word, oldest first: those the
    /// last compaction kept, then those sent since, before the current turn.
    pub fn user_messages_before(&self, index: usize) -> Vec<String> {
        let mut out = self.kept_user_messages.clone();
        for (m, turn) in self.messages[..index].iter().zip(&self.turns) {
            if let (Message::User { content, .. }, 1..) = (m, turn) {
                out.push(content.clone());
            }
        }
        out
    }

    /// Where the current turn's messages start (messages before it can be summarized).
    pub fn current_turn_start(&self, turn: u64) -> usize {
        self.turns
            .iter()
            .position(|t| *t == turn && turn > 0)
            .unwrap_or(self.messages.len())
    }

    /// Replaces the messages before `keep_from` (after the system prompt) by `summary`
    /// (summary messages, turn 0), saves the compaction, and returns how many messages
    /// were replaced and the estimated prompt tokens after.
    #[allow(clippy::too_many_arguments)]
    pub fn replace_with_summary(
        &mut self,
        keep_from: usize,
        summary: Vec<Message>,
        kept_user_messages: Vec<String>,
        trigger: CompactionTrigger,
        tokens_before: u64,
        specs: &[ToolSpec],
    ) -> (usize, u64) {
        let keep_from = keep_from.clamp(1, self.messages.len());
        let replaced = keep_from - 1;
        let summarized = self.turns[1..keep_from].iter().copied().max().unwrap_or(0);
        self.rewind_floor = self.rewind_floor.max(summarized);
        let tail: Vec<Message> = self.messages.drain(keep_from..).collect();
        let tail_turns: Vec<u64> = self.turns.drain(keep_from..).collect();
        self.messages.truncate(1);
        self.turns.truncate(1);
        self.turns.extend(summary.iter().map(|_| 0));
        self.messages.extend(summary);
        self.messages.extend(tail);
        self.turns.extend(tail_turns);
        self.kept_user_messages = kept_user_messages;
        self.measure = None;
        self.settled = 1;
        let tokens_after = self.estimate_tokens(specs);
        self.record(Record::Compacted {
            turn: self.turn,
            trigger,
            tokens_before,
            tokens_after,
            summarized_messages: replaced,
            user_messages: self.kept_user_messages.clone(),
            messages: self.messages[1..].to_vec(),
        });
        (replaced, tokens_after)
    }

    /// Replaces large tool results of turns older than the last [`KEEP_RECENT_TURNS`]
    /// by a marker.
    fn elide_old_outputs(&mut self, kinds: OutputKinds<'_>) {
        let Some(limit) = self.turn.checked_sub(KEEP_RECENT_TURNS) else {
            return;
        };
        let end = self
            .turns
            .iter()
            .position(|t| *t > limit)
            .unwrap_or(self.messages.len());
        if end <= self.settled {
            return;
        }
        // A tool result's call is in its own turn, and `settled` is where a turn starts:
        // indexing only the new messages keeps a replay of a long session linear.
        let calls = call_index(&self.messages[self.settled..end]);
        let mut changed = false;
        for i in self.settled..end {
            changed |= elide_at(
                &mut self.messages[i],
                ELIDE_MIN_BYTES,
                &calls,
                kinds,
                &self.attached,
            );
        }
        self.settled = end;
        if changed {
            self.measure = None;
        }
    }

    /// Keeps the whole tool output of the turns so far (the one ending included) within
    /// the output budget: the oldest are elided, and the newest, when it alone is over
    /// what is left, is cut to it (head and tail) rather than removed. Instructions are
    /// neither counted nor touched.
    fn elide_over_budget(&mut self, kinds: OutputKinds<'_>) {
        let Some(budget) = self.output_budget else {
            return;
        };
        // The results that may count: large and not elided yet (usually those of the
        // last few turns). When even all of them fit, no call is looked up: a replay
        // runs this at every turn end, and indexing every call of a long conversation
        // each time made it quadratic.
        let upper: usize = self.messages.iter().map(tool_size).sum();
        if upper <= budget {
            return;
        }
        let large: Vec<usize> = (0..self.messages.len())
            .filter(|&i| tool_size(&self.messages[i]) > 0)
            .collect();
        let calls = call_index_for(&self.messages, &large);
        let name_of = |m: &Message| match m {
            Message::Tool { tool_call_id, .. } => {
                calls.get(tool_call_id).map_or("a tool", String::as_str)
            }
            _ => "",
        };
        // Instructions are neither counted nor touched.
        let sizes: Vec<(usize, usize)> = large
            .iter()
            .map(|&i| {
                let m = &self.messages[i];
                let counted = kinds(name_of(m)) != OutputKind::Instructions;
                (i, if counted { tool_size(m) } else { 0 })
            })
            .filter(|&(_, size)| size > 0)
            .collect();
        let mut total: usize = sizes.iter().map(|&(_, size)| size).sum();
        if total <= budget {
            return;
        }
        let newest = sizes.last().map(|&(i, _)| i);
        for &(i, size) in &sizes {
            if total <= budget {
                break;
            }
            let left = budget.saturating_sub(total - size);
            if Some(i) == newest && left > ELIDE_MIN_BYTES {
                if let Message::Tool {
                    content,
                    tool_call_id,
                } = &mut self.messages[i]
                {
                    // Attached instructions are kept whole; the output before them is cut.
                    let kept = attached::tail(&self.attached, tool_call_id, content);
                    let (output, instructions) = content.split_at(content.len() - kept);
                    let mut cut = truncate_noting(
                        output,
                        left.saturating_sub(instructions.len()),
                        CUT_AT_TURN_END,
                    );
                    cut.push_str(instructions);
                    *content = cut;
                    total = total - size + content.len();
                }
            } else if elide_at(
                &mut self.messages[i],
                ELIDE_MIN_BYTES,
                &calls,
                kinds,
                &self.attached,
            ) {
                total -= size;
            }
            self.measure = None;
        }
    }
}

/// The size of a tool result that elision may count: over [`ELIDE_MIN_BYTES`] and not
/// elided yet; 0 for any other message.
fn tool_size(message: &Message) -> usize {
    match message {
        Message::Tool { content, .. }
            if content.len() > ELIDE_MIN_BYTES && !content.starts_with(ELIDED_PREFIX) =>
        {
            content.len()
        }
        _ => 0,
    }
}

/// [`call_index`] of `messages`, holding only the calls of the tool results at
/// `results`: each found from the end, as the whole index would hold it (a later call
/// with the same id replaces an earlier one).
fn call_index_for(messages: &[Message], results: &[usize]) -> HashMap<String, String> {
    let mut calls = HashMap::new();
    for &i in results {
        let Some(Message::Tool { tool_call_id, .. }) = messages.get(i) else {
            continue;
        };
        let found = messages.iter().rev().find_map(|m| match m {
            Message::Assistant { tool_calls, .. } => tool_calls
                .iter()
                .rev()
                .find(|c| c.id == *tool_call_id)
                .map(|c| c.name.clone()),
            _ => None,
        });
        if let Some(name) = found {
            calls.insert(tool_call_id.clone(), name);
        }
    }
    calls
}

/// The tool name of every call, by call id.
fn call_index(messages: &[Message]) -> HashMap<String, String> {
    let mut calls = HashMap::new();
    for m in messages {
        if let Message::Assistant { tool_calls, .. } = m {
            for c in tool_calls {
                calls.insert(c.id.clone(), c.name.clone());
            }
        }
    }
    calls
}

/// Elides one tool result if its output is over `min_bytes`, reproducible and not
/// elided yet; instruction files attached to it are kept after the marker.
fn elide_at(
    message: &mut Message,
    min_bytes: usize,
    calls: &HashMap<String, String>,
    kinds: OutputKinds<'_>,
    attached: &[attached::Attached],
) -> bool {
    let Message::Tool {
        tool_call_id,
        content,
    } = message
    else {
        return false;
    };
    let kept = attached::tail(attached, tool_call_id, content);
    let (output, instructions) = content.split_at(content.len() - kept);
    if output.len() <= min_bytes || content.starts_with(ELIDED_PREFIX) {
        return false;
    }
    let name = calls.get(tool_call_id).map_or("a tool", String::as_str);
    if kinds(name) == OutputKind::Instructions {
        return false;
    }
    let mut marker = elided_marker(name, output);
    marker.push_str(instructions);
    *content = marker;
    true
}

/// The marker that replaces an old tool result: what it was and how to get it again
/// (the call itself, with its arguments, stays in the answer before it).
pub fn elided_marker(name: &str, content: &str) -> String {
    format!(
        "{ELIDED_PREFIX} the output of {name} ({} bytes, {} lines) was removed to keep the \
         conversation small; call the tool again if you need it]",
        content.len(),
        line_count(content)
    )
}

/// `text.lines().count()`, counted with `memchr`: every line ends with `\n` but maybe
/// the last (a `\r` before it is part of the ending, not a line of its own).
fn line_count(text: &str) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// What one image is counted as, in bytes of text (about 1,100 tokens: a large
/// screenshot as the vision models bill it).
const IMAGE_BYTES: usize = 4_400;

/// Estimated tokens of messages, about 4 bytes per token; an image as [`IMAGE_BYTES`].
pub fn estimate_messages(messages: &[Message]) -> u64 {
    let bytes: usize = messages
        .iter()
        .map(|m| {
            8 + m.images().len() * IMAGE_BYTES
                + match m {
                    Message::System { content } | Message::User { content, .. } => content.len(),
                    Message::Assistant {
                        content,
                        tool_calls,
                        ..
                    } => {
                        content.len()
                            + tool_calls
                                .iter()
                                .map(|c| c.name.len() + c.arguments.len() + 16)
                                .sum::<usize>()
                    }
                    Message::Tool { content, .. } => content.len() + 16,
                }
        })
        .sum();
    (bytes as u64).div_ceil(4)
}

/// Estimated tokens of tool specs.
pub fn estimate_specs(specs: &[ToolSpec]) -> u64 {
    let bytes: usize = specs
        .iter()
        .map(|s| s.name.len() + s.description.len() + s.parameters.to_string().len())
        .sum();
    (bytes as u64).div_ceil(4)
}

#[cfg(test)]
#[path = "conversation_tests.rs"]
mod tests;
