//! Reading a Responses API answer: its Server-Sent Events (`response.output_text.delta`,
//! the reasoning deltas, `response.output_item.added`/`done`, the function-call argument
//! deltas, `response.completed`/`incomplete`/`failed`, `error`) or its one JSON body,
//! gathered into the same [`Completion`] and [`StreamEvent`]s as the Chat wire.
//!
//! Every field is optional and nothing is trusted: items are keyed by `output_index`
//! (else by `item_id`), so pieces that arrive before their item, items that never say
//! they are done, or a final `response.output` that repeats what streamed all come out
//! as one answer with nothing twice; unknown events are skipped; the gathered text,
//! reasoning and arguments are capped. Reasoning items are kept whole, as received, so
//! they go back byte for byte. It must not know HTTP, retries or how events are shown.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::llm::answer::{AnswerState, Flow};
use crate::llm::error::{PartialAnswer, Site};
use crate::llm::sse::SseEvent;
use crate::llm::{
    Completion, FinishReason, LlmError, Reasoning, ReasoningField, StreamEvent, ToolCall,
};
use crate::protocol::Usage;

/// Most bytes of text, reasoning and call arguments one answer may gather.
const MAX_ANSWER_BYTES: usize = 64 << 20;

/// The events that mean something here; every other `type` is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventKind {
    TextDelta,
    ReasoningDelta,
    ItemAdded,
    ArgumentsDelta,
    ArgumentsDone,
    ItemDone,
    Completed,
    Incomplete,
    Failed,
    Error,
    Unknown,
}

impl EventKind {
    fn of(name: &str) -> EventKind {
        match name {
            "response.output_text.delta" | "response.refusal.delta" => EventKind::TextDelta,
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                EventKind::ReasoningDelta
            }
            "response.output_item.added" => EventKind::ItemAdded,
            "response.function_call_arguments.delta" => EventKind::ArgumentsDelta,
            "response.function_call_arguments.done" => EventKind::ArgumentsDone,
            "response.output_item.done" => EventKind::ItemDone,
            "response.completed" => EventKind::Completed,
            "response.incomplete" => EventKind::Incomplete,
            "response.failed" => EventKind::Failed,
            "error" => EventKind::Error,
            _ => EventKind::Unknown,
        }
    }
}

/// One output item as far as it has arrived.
#[derive(Debug)]
struct Item {
    /// The item's own id (`fc_…`, `rs_…`), for events that name it instead of an index.
    id: Option<String>,
    kind: ItemKind,
    /// Whether its `output_item.done` (or the final output) has been taken.
    done: bool,
}

#[derive(Debug)]
enum ItemKind {
    /// Known only by a piece that named no type yet.
    Unknown,
    Message {
        /// Whether any of its text streamed as deltas.
        streamed: bool,
    },
    Reasoning {
        /// Whether any of its text streamed as deltas.
        streamed: bool,
        /// The whole item as received in `output_item.done`.
        verbatim: Option<Value>,
    },
    Call {
        call_id: Option<String>,
        name: String,
        arguments: String,
    },
    /// An item of a type not used here (a custom tool call, a web search…).
    Other,
}

impl ItemKind {
    fn of(item: &Value) -> ItemKind {
        match str_at(item, "type") {
            Some("message") => ItemKind::Message { streamed: false },
            Some("reasoning") => ItemKind::Reasoning {
                streamed: false,
                verbatim: None,
            },
            Some("function_call") => ItemKind::Call {
                call_id: None,
                name: String::new(),
                arguments: String::new(),
            },
            Some(_) => ItemKind::Other,
            None => ItemKind::Unknown,
        }
    }
}

/// What one Responses answer has gathered so far.
#[derive(Debug, Default)]
pub(crate) struct ResponsesState {
    text: String,
    reasoning: String,
    /// Where the last reasoning piece came from (output index, summary index), so a new
    /// part starts after a blank line.
    reasoning_at: Option<(u64, u64)>,
    items: BTreeMap<u64, Item>,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    events: usize,
    head: Vec<u8>,
    /// Bytes gathered, against [`MAX_ANSWER_BYTES`].
    size: usize,
}

impl AnswerState for ResponsesState {
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
            // Only an end marker after the model finished ends the answer.
            return match self.finish {
                Some(_) => Ok(Flow::Done),
                None => Err(LlmError::cut(site, model)),
            };
        }
        if data.is_empty() {
            return Ok(Flow::More);
        }
        let named_error = event.event.as_deref() == Some("error");
        let value: Value = match serde_json::from_str(data) {
            Ok(value) => value,
            Err(_) if named_error => {
                return Err(LlmError::in_stream(site, model, &Value::from(data)));
            }
            Err(e) => {
                let head: String = data.chars().take(200).collect();
                return Err(LlmError::protocol(
                    site,
                    model,
                    &format!("a stream event is not Responses JSON ({e}): {head}"),
                ));
            }
        };
        let name = str_at(&value, "type")
            .or(event.event.as_deref())
            .unwrap_or("");
        let kind = EventKind::of(name);
        if kind == EventKind::Unknown {
            // A chat-style `{"error": …}` with no type is still an error.
            if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
                return Err(LlmError::in_stream(site, model, error));
            }
        }
        self.take_event(kind, &value, site, model, on_event)
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
        let done = std::mem::take(self);
        let mut details = Vec::new();
        let mut calls = Vec::new();
        for (n, item) in done.items.into_values().enumerate() {
            match item.kind {
                ItemKind::Reasoning {
                    verbatim: Some(v), ..
                } => details.push(v),
                ItemKind::Call {
                    call_id,
                    name,
                    arguments,
                } if is_call(&call_id, &name, &arguments) => calls.push(ToolCall {
                    id: call_id
                        .filter(|id| !id.is_empty())
                        .or(item.id)
                        .unwrap_or_else(|| format!("call_{n}")),
                    name,
                    arguments: if arguments.trim().is_empty() {
                        "{}".to_string()
                    } else {
                        arguments
                    },
                }),
                _ => {}
            }
        }
        let reasoning = Reasoning {
            text: done.reasoning,
            field: ReasoningField::ResponsesItems,
            details,
            source: None,
        };
        Completion {
            text: done.text,
            reasoning: (!reasoning.is_empty()).then_some(reasoning),
            tool_calls: calls,
            finish_reason: done.finish,
            usage: done.usage,
        }
    }

    fn take_partial(&mut self) -> PartialAnswer {
        PartialAnswer {
            text: std::mem::take(&mut self.text),
            reasoning: Reasoning {
                text: std::mem::take(&mut self.reasoning),
                field: ReasoningField::ResponsesItems,
                ..Reasoning::default()
            },
        }
    }
}

impl ResponsesState {
    fn take_event(
        &mut self,
        kind: EventKind,
        value: &Value,
        site: &Site,
        model: &str,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Flow, LlmError> {
        let too_big = || {
            LlmError::protocol(
                site,
                model,
                &format!(
                    "the answer grew past {} MiB; it was not read further",
                    MAX_ANSWER_BYTES >> 20
                ),
            )
        };
        match kind {
            EventKind::TextDelta => {
                let delta = delta_of(value);
                let slot = self.slot(value, || ItemKind::Message { streamed: false });
                if let ItemKind::Message { streamed } = &mut slot.kind {
                    *streamed = true;
                }
                self.add_text(delta, on_event).map_err(|_| too_big())?;
            }
            EventKind::ReasoningDelta => {
                let delta = delta_of(value);
                let part = u64_at(value, "summary_index")
                    .or_else(|| u64_at(value, "content_index"))
                    .unwrap_or(0);
                let at = (self.index_of(value), part);
                let slot = self.slot(value, || ItemKind::Reasoning {
                    streamed: false,
                    verbatim: None,
                });
                if let ItemKind::Reasoning { streamed, .. } = &mut slot.kind {
                    *streamed = true;
                }
                self.add_reasoning(delta, at, on_event)
                    .map_err(|_| too_big())?;
            }
            EventKind::ItemAdded => {
                if let Some(item) = value.get("item") {
                    self.item_added(value, item);
                }
            }
            EventKind::ArgumentsDelta => {
                let delta = delta_of(value);
                self.grow(delta.len()).map_err(|_| too_big())?;
                if let Some(arguments) = self.call_arguments(value) {
                    arguments.push_str(delta);
                }
            }
            EventKind::ArgumentsDone => {
                if let Some(whole) = str_at(value, "arguments") {
                    self.grow(whole.len()).map_err(|_| too_big())?;
                    if let Some(arguments) = self.call_arguments(value) {
                        whole.clone_into(arguments);
                    }
                }
            }
            EventKind::ItemDone => {
                if let Some(item) = value.get("item") {
                    let index = self.index_or_new(value);
                    self.item_done(index, item, on_event)
                        .map_err(|_| too_big())?;
                }
            }
            EventKind::Completed | EventKind::Incomplete => {
                let response = value.get("response").unwrap_or(&Value::Null);
                self.take_response(response, on_event)
                    .map_err(|_| too_big())?;
                if self.finish.is_none() {
                    self.finish = Some(self.natural_finish());
                }
                return Ok(Flow::Done);
            }
            EventKind::Failed => {
                let response = value.get("response").unwrap_or(&Value::Null);
                return Err(failure(response, site, model));
            }
            EventKind::Error => return Err(LlmError::in_stream(site, model, value)),
            EventKind::Unknown => {}
        }
        Ok(Flow::More)
    }

    /// A whole response object (the final event's, or a non-streaming body): its output
    /// items fill in what did not stream, then its usage and why it stopped.
    fn take_response(
        &mut self,
        response: &Value,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), TooBig> {
        if let Some(output) = response.get("output").and_then(Value::as_array) {
            for (index, item) in output.iter().enumerate() {
                // The item that streamed with this id, wherever the stream put it.
                let index = str_at(item, "id")
                    .and_then(|id| {
                        self.items
                            .iter()
                            .find(|(_, i)| i.id.as_deref() == Some(id))
                            .map(|(index, _)| *index)
                    })
                    .unwrap_or(index as u64);
                if self.items.get(&index).is_some_and(|i| i.done) {
                    continue;
                }
                self.item_done(index, item, on_event)?;
            }
        }
        if let Some(usage) = response.get("usage").and_then(usage_of) {
            self.usage = Some(usage);
        }
        if str_at(response, "status") == Some("incomplete") {
            let reason = response
                .get("incomplete_details")
                .and_then(|d| str_at(d, "reason"))
                .unwrap_or("incomplete");
            self.finish = Some(match reason {
                "max_output_tokens" => FinishReason::Length,
                "content_filter" => FinishReason::ContentFilter,
                other => FinishReason::Other(other.to_string()),
            });
        }
        Ok(())
    }

    /// Stop, or ToolCalls when the answer holds a call.
    fn natural_finish(&self) -> FinishReason {
        let calls = self.items.values().any(|i| match &i.kind {
            ItemKind::Call {
                call_id,
                name,
                arguments,
            } => is_call(call_id, name, arguments),
            _ => false,
        });
        if calls {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        }
    }

    /// The index an event names: `output_index`, else the item with its `item_id`.
    fn index_of(&self, value: &Value) -> u64 {
        self.find_index(value).unwrap_or_else(|| self.next_index())
    }

    fn find_index(&self, value: &Value) -> Option<u64> {
        u64_at(value, "output_index").or_else(|| {
            let id = str_at(value, "item_id")?;
            self.items
                .iter()
                .find(|(_, item)| item.id.as_deref() == Some(id))
                .map(|(index, _)| *index)
        })
    }

    fn next_index(&self) -> u64 {
        self.items
            .last_key_value()
            .map_or(0, |(index, _)| index.saturating_add(1))
    }

    fn index_or_new(&self, value: &Value) -> u64 {
        self.find_index(value).unwrap_or_else(|| self.next_index())
    }

    /// The item an event is about, made (as `make` says) when it has not arrived yet.
    fn slot(&mut self, value: &Value, make: impl FnOnce() -> ItemKind) -> &mut Item {
        let index = self.index_of(value);
        let id = str_at(value, "item_id").map(str::to_string);
        let item = self.items.entry(index).or_insert_with(|| Item {
            id: None,
            kind: make(),
            done: false,
        });
        if item.id.is_none() {
            item.id = id;
        }
        item
    }

    /// The arguments of the call an event is about (made when it has not arrived yet;
    /// `None` when that item is not a call).
    fn call_arguments(&mut self, value: &Value) -> Option<&mut String> {
        let slot = self.slot(value, || ItemKind::Unknown);
        if matches!(slot.kind, ItemKind::Unknown) {
            slot.kind = ItemKind::Call {
                call_id: None,
                name: String::new(),
                arguments: String::new(),
            };
        }
        match &mut slot.kind {
            ItemKind::Call { arguments, .. } if !slot.done => Some(arguments),
            _ => None,
        }
    }

    fn item_added(&mut self, event: &Value, item: &Value) {
        let index = self.index_or_new(event);
        let id = str_at(item, "id").map(str::to_string);
        let entry = self.items.entry(index).or_insert_with(|| Item {
            id: None,
            kind: ItemKind::Unknown,
            done: false,
        });
        if entry.id.is_none() {
            entry.id = id;
        }
        if matches!(entry.kind, ItemKind::Unknown) {
            entry.kind = ItemKind::of(item);
        }
        if let ItemKind::Call {
            call_id,
            name,
            arguments,
        } = &mut entry.kind
        {
            fill_call(call_id, name, item);
            if arguments.is_empty()
                && let Some(text) = str_at(item, "arguments")
            {
                text.clone_into(arguments);
            }
        }
    }

    /// A finished item: a call's final name, id and arguments; a reasoning item kept
    /// whole; text that did not stream, reported now.
    fn item_done(
        &mut self,
        index: u64,
        item: &Value,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), TooBig> {
        let entry = self.items.entry(index).or_insert_with(|| Item {
            id: None,
            kind: ItemKind::Unknown,
            done: false,
        });
        if entry.id.is_none() {
            entry.id = str_at(item, "id").map(str::to_string);
        }
        let fresh = ItemKind::of(item);
        if matches!(entry.kind, ItemKind::Unknown)
            || std::mem::discriminant(&entry.kind) != std::mem::discriminant(&fresh)
                && !matches!(fresh, ItemKind::Unknown)
        {
            entry.kind = fresh;
        }
        entry.done = true;
        let mut unstreamed_text = Vec::new();
        let mut unstreamed_reasoning = Vec::new();
        match &mut entry.kind {
            ItemKind::Call {
                call_id,
                name,
                arguments,
            } => {
                fill_call(call_id, name, item);
                if let Some(text) = str_at(item, "arguments") {
                    text.clone_into(arguments);
                }
            }
            ItemKind::Reasoning { streamed, verbatim } => {
                *verbatim = Some(item.clone());
                if !*streamed {
                    for part in ["summary", "content"] {
                        unstreamed_reasoning.extend(texts_of(item.get(part), "text"));
                    }
                }
            }
            ItemKind::Message { streamed } => {
                if !*streamed {
                    unstreamed_text.extend(texts_of(item.get("content"), "text"));
                    unstreamed_text.extend(texts_of(item.get("content"), "refusal"));
                }
            }
            ItemKind::Unknown | ItemKind::Other => {}
        }
        let size: usize = item_size(item);
        self.grow(size)?;
        for (part, text) in unstreamed_reasoning.into_iter().enumerate() {
            self.add_reasoning(&text, (index, part as u64), on_event)?;
        }
        for text in unstreamed_text {
            self.add_text(&text, on_event)?;
        }
        Ok(())
    }

    fn add_text(
        &mut self,
        text: &str,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), TooBig> {
        if text.is_empty() {
            return Ok(());
        }
        self.grow(text.len())?;
        self.text.push_str(text);
        on_event(StreamEvent::Text(text.to_string()));
        Ok(())
    }

    fn add_reasoning(
        &mut self,
        text: &str,
        at: (u64, u64),
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), TooBig> {
        if text.is_empty() {
            return Ok(());
        }
        self.grow(text.len() + 2)?;
        let piece = if !self.reasoning.is_empty() && self.reasoning_at != Some(at) {
            format!("\n\n{text}")
        } else {
            text.to_string()
        };
        self.reasoning_at = Some(at);
        self.reasoning.push_str(&piece);
        on_event(StreamEvent::Reasoning(piece));
        Ok(())
    }

    fn grow(&mut self, bytes: usize) -> Result<(), TooBig> {
        self.size = self.size.saturating_add(bytes);
        if self.size > MAX_ANSWER_BYTES {
            Err(TooBig)
        } else {
            Ok(())
        }
    }
}

/// The answer passed [`MAX_ANSWER_BYTES`].
#[derive(Debug)]
struct TooBig;

/// A non-streaming Responses body: the response object, or an error object.
pub(crate) fn parse_body(
    body: &[u8],
    site: &Site,
    model: &str,
    on_event: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<Completion, LlmError> {
    let not_a_response = |why: &str| {
        let head = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        LlmError::protocol(
            site,
            model,
            &format!("the body is not a Responses API response ({why}): {head}"),
        )
    };
    let value: Value = serde_json::from_slice(body).map_err(|e| not_a_response(&e.to_string()))?;
    if let Some(error) = value.get("error").filter(|e| !e.is_null())
        && str_at(&value, "status") != Some("completed")
    {
        return Err(LlmError::in_stream(site, model, error));
    }
    if str_at(&value, "status") == Some("failed") {
        return Err(failure(&value, site, model));
    }
    if !value.get("output").is_some_and(Value::is_array) {
        return Err(not_a_response("no output"));
    }
    let mut state = ResponsesState::default();
    state
        .take_response(&value, on_event)
        .map_err(|_| LlmError::protocol(site, model, "the answer is too large to read"))?;
    if state.finish.is_none() {
        state.finish = Some(state.natural_finish());
    }
    Ok(state.take_completion())
}

/// The error of a failed response (`response.error`), or a plain server failure.
fn failure(response: &Value, site: &Site, model: &str) -> LlmError {
    match response.get("error").filter(|e| !e.is_null()) {
        Some(error) => LlmError::in_stream(site, model, error),
        None => LlmError::in_stream(
            site,
            model,
            &serde_json::json!({"message": "the response failed", "code": "server_error"}),
        ),
    }
}

/// Whether a call item holds anything (a piece that named nothing is dropped).
fn is_call(call_id: &Option<String>, name: &str, arguments: &str) -> bool {
    call_id.is_some() || !name.is_empty() || !arguments.trim().is_empty()
}

/// Fills a call's id and name from an item where they are still missing.
fn fill_call(call_id: &mut Option<String>, name: &mut String, item: &Value) {
    if call_id.is_none() {
        *call_id = str_at(item, "call_id").map(str::to_string);
    }
    if name.is_empty()
        && let Some(n) = str_at(item, "name")
    {
        n.clone_into(name);
    }
}

/// The `key` strings of the objects in an array (`summary[].text`, `content[].text`).
fn texts_of(parts: Option<&Value>, key: &str) -> Vec<String> {
    parts
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| str_at(p, key))
                .filter(|t| !t.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The bytes an item's strings hold (what keeping it costs), roughly.
fn item_size(item: &Value) -> usize {
    match item {
        Value::String(s) => s.len(),
        Value::Array(a) => a.iter().map(item_size).sum(),
        Value::Object(o) => o.iter().map(|(k, v)| k.len() + item_size(v)).sum(),
        _ => 8,
    }
}

fn delta_of(value: &Value) -> &str {
    str_at(value, "delta").unwrap_or("")
}

fn str_at<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// A count that may come as a number or a numeric string.
fn u64_at(value: &Value, key: &str) -> Option<u64> {
    match value.get(key)? {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `usage`: `input_tokens` (of which `input_tokens_details.cached_tokens` came from the
/// cache) and `output_tokens` (reasoning tokens, `output_tokens_details.reasoning_tokens`,
/// are part of it).
fn usage_of(usage: &Value) -> Option<Usage> {
    let input = u64_at(usage, "input_tokens");
    let output = u64_at(usage, "output_tokens");
    if input.is_none() && output.is_none() {
        return None;
    }
    let cached = usage
        .get("input_tokens_details")
        .and_then(|d| u64_at(d, "cached_tokens"))
        .unwrap_or(0);
    Some(Usage {
        input_tokens: input.unwrap_or(0),
        output_tokens: output.unwrap_or(0),
        cached_input_tokens: cached,
        cache_write_tokens: 0,
        estimated: false,
        cost: None,
    })
}
