//! Replaying a saved session: [`Replayer`] applies the records of a session file in
//! order and rebuilds the [`Conversation`] that was being sent (the same turn-end rules,
//! elision, compactions, rewinds, notes and attached instructions), the history items a
//! frontend shows, and the state around it ([`Replayed`]).
//!
//! It must not know where the records are read from or how anything is drawn.

use super::*;

/// How many history items a replay keeps for frontends to show.
const HISTORY_ITEMS: usize = 200;

/// What a replayed session left: its conversation and the state around it.
#[derive(Debug)]
pub struct Replayed {
    /// The conversation to send, with today's system prompt.
    pub conversation: Conversation,
    /// The model last used, if the file says.
    pub model: Option<String>,
    /// The reasoning effort last set, if the file says.
    pub effort: Option<crate::protocol::Effort>,
    /// Skills loaded at the end, in load order.
    pub loaded_skills: Vec<String>,
    /// The last system prompt saved (to tell whether today's differs).
    pub saved_prompt: Option<String>,
    /// The latest prompts, answers and tool calls, for frontends to show.
    pub history: Vec<HistoryItem>,
    /// Turns in the file.
    pub turns: u64,
    /// The plan `update_plan` last set, if any.
    pub plan: Option<crate::protocol::PlanUpdate>,
}

/// Rebuilds a conversation from a session file's records, applying the same rules as
/// a live session (failed turns left out, old tool output elided, compactions and
/// clears applied), so memory stays bounded by what is sent.
pub struct Replayer<'k> {
    conversation: Conversation,
    kinds: OutputKinds<'k>,
    /// The turn whose messages are being read and has not ended.
    open_turn: Option<u64>,
    model: Option<String>,
    effort: Option<crate::protocol::Effort>,
    loaded: Vec<String>,
    saved_prompt: Option<String>,
    history: VecDeque<HistoryItem>,
    plan: Option<crate::protocol::PlanUpdate>,
}

impl<'k> Replayer<'k> {
    /// A replay that will send `system_prompt` (today's) to a model with this window.
    pub fn new(system_prompt: String, window: Option<u64>, kinds: OutputKinds<'k>) -> Self {
        let mut conversation = Conversation::new(system_prompt, None);
        conversation.set_window(window);
        Replayer {
            conversation,
            kinds,
            open_turn: None,
            model: None,
            effort: None,
            loaded: Vec::new(),
            saved_prompt: None,
            history: VecDeque::new(),
            plan: None,
        }
    }

    fn remember(&mut self, item: HistoryItem) {
        if self.history.len() == HISTORY_ITEMS {
            self.history.pop_front();
        }
        self.history.push_back(item);
    }

    /// Applies one record.
    pub fn apply(&mut self, record: Record) {
        match record {
            Record::Header(header) => {
                if self.model.is_none() {
                    self.model = Some(header.model);
                }
            }
            Record::SystemPrompt { prompt } => self.saved_prompt = Some(prompt),
            Record::Message { turn, message } => {
                if self.open_turn.is_some_and(|open| open != turn) {
                    self.close_open_turn();
                }
                self.open_turn = Some(turn);
                self.conversation.turn = self.conversation.turn.max(turn);
                match &message {
                    Message::User { content, .. } => {
                        // What was typed for it: its `prompt` record, else itself.
                        let c = &mut self.conversation;
                        if c.prompts.last().is_none_or(|(t, _)| *t != turn) {
                            c.prompts.push((turn, content.clone()));
                        }
                        // The notes before it went with it.
                        let notes = std::mem::take(&mut self.conversation.notes);
                        if !notes.is_empty() {
                            self.conversation.delivered.insert(turn, notes);
                        }
                        self.remember(HistoryItem::User {
                            text: content.clone(),
                        });
                    }
                    Message::Assistant {
                        content,
                        reasoning,
                        tool_calls,
                    } => {
                        if let Some(text) = reasoning
                            .as_ref()
                            .map(|r| r.text.trim())
                            .filter(|t| !t.is_empty())
                        {
                            self.remember(HistoryItem::Reasoning {
                                text: text.to_string(),
                            });
                        }
                        if !content.trim().is_empty() {
                            self.remember(HistoryItem::Assistant {
                                text: content.to_string(),
                            });
                        }
                        for c in tool_calls {
                            self.remember(HistoryItem::ToolCall {
                                name: c.name.clone(),
                                arguments: c.arguments.chars().take(200).collect(),
                            });
                        }
                    }
                    Message::System { .. } | Message::Tool { .. } => {}
                }
                self.conversation.messages.push(message);
                self.conversation.turns.push(turn);
            }
            Record::TurnEnd { turn, outcome } => {
                self.open_turn = None;
                self.conversation.turn = self.conversation.turn.max(turn);
                if matches!(outcome, TurnOutcome::Failed { .. }) {
                    self.conversation.drop_turn(turn);
                }
                self.conversation.elide_old_outputs(self.kinds);
                self.conversation.elide_over_budget(self.kinds);
            }
            Record::Usage { .. } | Record::Resumed { .. } => {}
            Record::Plan { plan } => self.plan = Some(plan),
            Record::SkillLoaded { name } => {
                if !self.loaded.contains(&name) {
                    self.loaded.push(name);
                }
            }
            Record::SkillUnloaded { name } => self.loaded.retain(|n| *n != name),
            Record::Compacted {
                turn,
                messages,
                user_messages,
                ..
            } => {
                let c = &mut self.conversation;
                c.messages.truncate(1);
                c.turns.truncate(1);
                // The summary and its answer belong to no turn; the current turn's
                // messages that were kept follow them.
                let summary_len = SUMMARY_MESSAGES.min(messages.len());
                for (i, m) in messages.into_iter().enumerate() {
                    c.turns.push(if i < summary_len { 0 } else { turn });
                    c.messages.push(m);
                }
                c.kept_user_messages = user_messages;
                c.settled = 1;
                c.measure = None;
                // The turn it happened in is kept only when its messages follow the
                // summary (a compaction before a request, not `/compact`).
                let kept_turn = c.messages.len() > 1 + summary_len;
                let floor = if kept_turn {
                    turn.saturating_sub(1)
                } else {
                    turn
                };
                c.rewind_floor = c.rewind_floor.max(floor);
            }
            Record::Prompt { turn, text } => self.conversation.prompts.push((turn, text)),
            Record::InstructionsAttached {
                call_id,
                files,
                bytes,
                ..
            } => self.conversation.note_attached(&call_id, files, bytes),
            Record::Note { text, .. } => self.conversation.notes.push(text),
            Record::Rewound { turn } => {
                self.close_open_turn();
                self.conversation.apply_rewind(turn);
            }
            Record::ModelChanged { model } => self.model = Some(model),
            Record::EffortChanged { effort } => self.effort = Some(effort),
            Record::Cleared => {
                self.close_open_turn();
                let c = &mut self.conversation;
                c.rewind_floor = c.turn;
                c.prompts.clear();
                c.notes.clear();
                c.delivered.clear();
                c.messages.truncate(1);
                c.turns.truncate(1);
                c.kept_user_messages.clear();
                c.attached.clear();
                c.settled = 1;
                self.loaded.clear();
            }
        }
    }

    /// A turn whose end was never saved (the run was killed): calls without a result
    /// get one saying so, so the conversation stays valid for every provider.
    fn close_open_turn(&mut self) {
        let Some(turn) = self.open_turn.take() else {
            return;
        };
        let c = &mut self.conversation;
        let start = c.current_turn_start(turn);
        let answered: Vec<String> = c.messages[start..]
            .iter()
            .filter_map(|m| match m {
                Message::Tool { tool_call_id, .. } => Some(tool_call_id.clone()),
                _ => None,
            })
            .collect();
        let missing: Vec<String> = c.messages[start..]
            .iter()
            .flat_map(|m| match m {
                Message::Assistant { tool_calls, .. } => tool_calls.clone(),
                _ => Vec::new(),
            })
            .map(|call| call.id)
            .filter(|id| !answered.contains(id))
            .collect();
        for id in missing {
            c.messages.push(Message::Tool {
                tool_call_id: id,
                content: "Not run: the session ended before this call finished.".into(),
            });
            c.turns.push(turn);
        }
        c.elide_old_outputs(self.kinds);
    }

    /// The replayed session; records from now on go to `sink`.
    pub fn finish(mut self, sink: Option<Box<dyn RecordSink>>) -> Replayed {
        self.close_open_turn();
        let mut conversation = self.conversation;
        conversation.sink = sink;
        // The file already has its system prompt; a changed one is recorded by the
        // caller, who knows whether it changed.
        conversation.prompt_recorded = true;
        conversation.recorded_skills = self.loaded.clone();
        let turns = conversation.turn;
        Replayed {
            conversation,
            model: self.model,
            effort: self.effort,
            loaded_skills: self.loaded,
            saved_prompt: self.saved_prompt,
            history: self.history.into(),
            plan: self.plan,
            turns,
        }
    }
}
