//! The Chat Completions wire's answer as it streams in (or arrives as one body's
//! message): text, reasoning in the field it came in, OpenRouter's `reasoning_details`
//! merged by index, tool calls, the finish reason and usage, gathered into one
//! [`Completion`] or, when the attempt fails, the [`PartialAnswer`] streamed so far.
//! `responses/stream.rs` is the same for the Responses wire.
//!
//! It must not know HTTP, retries or the agent.

use super::answer::{AnswerState, Flow};
use super::error::{PartialAnswer, Site};
use super::reasoning::DetailsAccumulator;
use super::sse::SseEvent;
use super::wire::{ChatChunk, ToolCallAccumulator, finish_reason};
use super::{Completion, FinishReason, LlmError, Reasoning, ReasoningField, StreamEvent, ToolCall};
use crate::protocol::Usage;

/// What one streamed answer has gathered so far.
#[derive(Debug, Default)]
pub(super) struct ChatAnswer {
    text: String,
    reasoning: String,
    /// The field the first reasoning piece came in.
    reasoning_field: Option<ReasoningField>,
    /// OpenRouter's `reasoning_details` pieces, merged by index.
    details: DetailsAccumulator,
    calls: ToolCallAccumulator,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    events: usize,
    /// The first bytes of the body, for a message when it is not an event stream.
    head: Vec<u8>,
}

impl ChatAnswer {
    fn handle(
        &mut self,
        event: SseEvent,
        site: &Site,
        model: &str,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Flow, LlmError> {
        self.events += 1;
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(Flow::Done);
        }
        if data.is_empty() {
            return Ok(Flow::More);
        }
        let is_error_event = event.event.as_deref() == Some("error");
        let chunk: ChatChunk = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(_) if is_error_event => {
                return Err(LlmError::in_stream(site, model, &serde_json::json!(data)));
            }
            Err(e) => {
                let head: String = data.chars().take(200).collect();
                return Err(LlmError::protocol(
                    site,
                    model,
                    &format!("a stream event is not chat-completion JSON ({e}): {head}"),
                ));
            }
        };
        if let Some(error) = &chunk.error {
            return Err(LlmError::in_stream(site, model, error));
        }
        if is_error_event {
            let value: serde_json::Value = serde_json::from_str(data).unwrap_or_default();
            return Err(LlmError::in_stream(site, model, &value));
        }
        if let Some(usage) = chunk.reported_usage() {
            self.usage = Some(usage);
        }
        for choice in chunk.choices {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(mut delta) = choice.delta.or(choice.message) {
                // The readable text the details add, shown only when the delta has no
                // plain reasoning text (OpenRouter sends both, the same words).
                let mut from_details = String::new();
                for piece in std::mem::take(&mut delta.reasoning_details) {
                    if let Some(text) = self.details.push(piece) {
                        from_details.push_str(&text);
                    }
                }
                if let Some((r, field)) = delta.reasoning_piece() {
                    self.reasoning_field.get_or_insert(field);
                    self.reasoning.push_str(r);
                    on_event(StreamEvent::Reasoning(r.to_string()));
                } else if !from_details.is_empty() {
                    self.reasoning_field
                        .get_or_insert(ReasoningField::Reasoning);
                    self.reasoning.push_str(&from_details);
                    on_event(StreamEvent::Reasoning(from_details));
                }
                if let Some(t) = delta.content.filter(|t| !t.is_empty()) {
                    self.text.push_str(&t);
                    on_event(StreamEvent::Text(t));
                }
                delta.tool_calls.iter().for_each(|d| self.calls.push(d));
            }
            if let Some(reason) = choice.finish_reason.as_deref().and_then(finish_reason) {
                self.finish = Some(reason);
            }
        }
        Ok(Flow::More)
    }

    /// The finished answer, moved out (the state is left empty).
    fn take_completion(&mut self) -> Completion {
        let done = std::mem::take(self);
        let tool_calls: Vec<ToolCall> = done.calls.finish();
        let details = done.details.finish();
        let field = done.reasoning_field.unwrap_or(if details.is_empty() {
            ReasoningField::default()
        } else {
            ReasoningField::Reasoning
        });
        Completion {
            text: done.text,
            reasoning: (!done.reasoning.is_empty() || !details.is_empty()).then(|| Reasoning {
                text: done.reasoning,
                field,
                details,
                source: None,
            }),
            tool_calls,
            finish_reason: done.finish,
            usage: done.usage,
        }
    }

    /// What streamed so far, moved out.
    fn take_partial(&mut self) -> PartialAnswer {
        PartialAnswer {
            text: std::mem::take(&mut self.text),
            reasoning: Reasoning {
                text: std::mem::take(&mut self.reasoning),
                field: self.reasoning_field.take().unwrap_or_default(),
                details: std::mem::take(&mut self.details).finish(),
                source: None,
            },
        }
    }
}

impl AnswerState for ChatAnswer {
    fn handle(
        &mut self,
        event: SseEvent,
        site: &Site,
        model: &str,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Flow, LlmError> {
        ChatAnswer::handle(self, event, site, model, on_event)
    }

    fn finished(&self) -> bool {
        self.finish.is_some()
    }

    fn events(&self) -> usize {
        self.events
    }

    fn head_mut(&mut self) -> &mut Vec<u8> {
        &mut self.head
    }

    fn take_completion(&mut self) -> Completion {
        ChatAnswer::take_completion(self)
    }

    fn take_partial(&mut self) -> PartialAnswer {
        ChatAnswer::take_partial(self)
    }
}
