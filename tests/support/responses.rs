//! Replies in the Responses API's shape for the scripted server: an event stream of
//! `response.*` events ([`rs_sse`]) built from output items — reasoning with encrypted
//! content ([`rs_reasoning`]), answer text ([`rs_text`]), function calls ([`rs_call`]) —
//! ending in `response.completed` with usage; and the short forms [`rs_answer`] and
//! [`rs_call_reply`]. The events are written as compact JSON, as OpenAI sends them, so a
//! test can look for an item's exact bytes in what the client sends back.

use serde_json::{Value, json};

use super::{Reply, raw, sse};

/// One output item and the events that stream it.
#[derive(Debug, Clone)]
pub struct RsItem {
    /// The item as `response.output_item.done` and the final output carry it.
    pub item: Value,
    /// The deltas between its `added` and `done` events: (event type, delta text).
    deltas: Vec<(&'static str, String)>,
}

/// A reasoning item with a readable summary and `encrypted_content`.
pub fn rs_reasoning(id: &str, summary: &str, encrypted: &str) -> RsItem {
    RsItem {
        item: json!({"id": id, "type": "reasoning",
                     "summary": [{"type": "summary_text", "text": summary}],
                     "encrypted_content": encrypted}),
        deltas: vec![("response.reasoning_summary_text.delta", summary.to_string())],
    }
}

/// An assistant message with this text, streamed in one delta.
pub fn rs_text(text: &str) -> RsItem {
    RsItem {
        item: json!({"id": "msg_mock", "type": "message", "status": "completed",
                     "role": "assistant",
                     "content": [{"type": "output_text", "text": text, "annotations": []}]}),
        deltas: vec![("response.output_text.delta", text.to_string())],
    }
}

/// A function call of `name` with the JSON text `args`, streamed in two pieces.
pub fn rs_call(call_id: &str, name: &str, args: &str) -> RsItem {
    let cut = (0..=args.len() / 2)
        .rev()
        .find(|&i| args.is_char_boundary(i))
        .unwrap_or(0);
    RsItem {
        item: json!({"id": format!("fc_{call_id}"), "type": "function_call",
                     "status": "completed", "call_id": call_id, "name": name,
                     "arguments": args}),
        deltas: vec![
            (
                "response.function_call_arguments.delta",
                args[..cut].to_string(),
            ),
            (
                "response.function_call_arguments.delta",
                args[cut..].to_string(),
            ),
        ],
    }
}

fn frame(event: &Value) -> Vec<u8> {
    let kind = event["type"].as_str().unwrap_or("message");
    format!("event: {kind}\ndata: {event}\n\n").into_bytes()
}

/// A 200 event stream of these items, then `response.completed` with this usage
/// (input, output, cached input tokens). No `[DONE]`: the Responses API sends none.
pub fn rs_sse(items: Vec<RsItem>, usage: (u64, u64, u64)) -> Reply {
    let mut events = vec![json!({"type": "response.created",
        "response": {"id": "resp_mock", "status": "in_progress", "output": []}})];
    let mut output = Vec::new();
    for (index, RsItem { item, deltas }) in items.into_iter().enumerate() {
        let id = item["id"].clone();
        let mut added = item.clone();
        for key in ["summary", "content"] {
            if added.get(key).is_some() {
                added[key] = json!([]);
            }
        }
        if added.get("arguments").is_some() {
            added["arguments"] = json!("");
        }
        events.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        );
        for (kind, delta) in deltas {
            events.push(json!({"type": kind, "output_index": index, "item_id": id,
                               "summary_index": 0, "content_index": 0, "delta": delta}));
        }
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
        output.push(item);
    }
    let (input, out, cached) = usage;
    events.push(json!({"type": "response.completed", "response": {
        "id": "resp_mock", "status": "completed", "output": output,
        "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
                  "output_tokens": out, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input + out}}}));
    sse(events.iter().map(|e| raw(frame(e))).collect()).without_done()
}

/// A reply in which the model answers `text` and stops.
pub fn rs_answer(text: &str) -> Reply {
    rs_sse(vec![rs_text(text)], (10, 2, 0))
}

/// A reply in which the model reasons (the encrypted item `encrypted`) and calls `name`.
pub fn rs_call_reply(call_id: &str, name: &str, args: &str, encrypted: &str) -> Reply {
    rs_sse(
        vec![
            rs_reasoning(
                &format!("rs_{call_id}"),
                &format!("thinking about {call_id}"),
                encrypted,
            ),
            rs_call(call_id, name, args),
        ],
        (100, 20, 80),
    )
}
