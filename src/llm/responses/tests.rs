//! Tests of the Responses wire: the request body, and the answer read from events that
//! are well formed, cut, unknown, missing fields, huge or out of order.

use serde_json::{Value, json};

use super::RequestBody;
use super::stream::{ResponsesState, parse_body};
use crate::llm::answer::{AnswerState, Flow};
use crate::llm::error::Site;
use crate::llm::sse::SseEvent;
use crate::llm::{
    ChatRequest, Completion, FinishReason, LlmError, Message, ProviderConfig, Reasoning,
    StreamEvent, StreamMode, ToolCall, ToolChoice, ToolSpec,
};
use crate::protocol::{ErrorKind, Usage};

fn site() -> Site {
    Site {
        provider: "openai".into(),
        endpoint: "https://api.example.com/v1/responses".into(),
        base_url: "https://api.example.com/v1".into(),
        key_source: "OPENAI_API_KEY".into(),
        key_sent: true,
        secrets: crate::redact::Redactor::new(),
    }
}

fn reasoning_item(id: &str, secret: &str) -> Value {
    json!({"id": id, "type": "reasoning", "summary": [{"type": "summary_text", "text": "I should look."}],
           "encrypted_content": secret})
}

fn conversation(reasoning: Option<Reasoning>) -> Vec<Message> {
    vec![
        Message::System {
            content: "sys".into(),
        },
        Message::User {
            images: Vec::new(),
            content: "hi".into(),
        },
        Message::Assistant {
            content: "Looking.".into(),
            reasoning,
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"a"}"#.into(),
            }],
        },
        Message::Tool {
            tool_call_id: "call_1".into(),
            content: "text".into(),
        },
    ]
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "read_file".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }]
}

fn body(messages: &[Message], tools: &[ToolSpec], cfg: &ProviderConfig, mode: StreamMode) -> Value {
    let req = ChatRequest {
        model: "gpt-5-codex",
        messages,
        tools,
        effort: None,
        cache_key: None,
        images: &crate::images::NO_IMAGES,
        output_schema: None,
    };
    serde_json::from_slice(&RequestBody::new(&req, cfg, mode).to_bytes().unwrap()).unwrap()
}

#[test]
fn request_body_shape() {
    let item = reasoning_item("rs_1", "gAAAA-secret");
    let reasoning = Reasoning {
        text: "I should look.".into(),
        details: vec![item.clone()],
        ..Reasoning::default()
    };
    let messages = conversation(Some(reasoning));
    let mut cfg = ProviderConfig::new("openai", "https://api.openai.com/v1");
    cfg.max_output_tokens = Some(1000);
    assert_eq!(
        body(&messages, &tools(), &cfg, StreamMode::Sse),
        json!({
            "model": "gpt-5-codex",
            "instructions": "sys",
            "input": [
                {"type": "message", "role": "user", "content": "hi"},
                item,
                {"type": "message", "role": "assistant", "content": "Looking."},
                {"type": "function_call", "call_id": "call_1", "name": "read_file",
                 "arguments": "{\"path\":\"a\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "text"},
            ],
            "tools": [{"type": "function", "name": "read_file", "description": "Read a file",
                       "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                       "strict": false}],
            "tool_choice": "auto",
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "max_output_tokens": 1000,
        })
    );
    let plain = body(&messages, &[], &cfg, StreamMode::NonStreaming);
    assert_eq!(plain["stream"], false);
    assert!(plain.get("tools").is_none() && plain.get("tool_choice").is_none());
}

/// Only Responses reasoning items with encrypted content go back: text-only reasoning,
/// another wire's details and an item the server would have to look up never do.
#[test]
fn only_returnable_reasoning_goes_back() {
    let reasoning = Reasoning {
        text: "thought".into(),
        details: vec![
            json!({"type": "reasoning.text", "text": "x", "signature": "sig"}),
            json!({"id": "rs_2", "type": "reasoning", "summary": []}),
            json!({"id": "rs_3", "type": "reasoning", "encrypted_content": null}),
        ],
        ..Reasoning::default()
    };
    let sent = body(
        &conversation(Some(reasoning)),
        &[],
        &ProviderConfig::new("p", "http://x/v1"),
        StreamMode::Sse,
    );
    let kinds: Vec<&str> = sent["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "message",
            "function_call",
            "function_call_output"
        ]
    );
    assert!(!sent.to_string().contains("thought"));
}

/// A reasoning item with nothing after it (an answer that ended with no text and no
/// call) is not sent: the API refuses a reasoning item without its following item.
#[test]
fn reasoning_with_nothing_after_it_stays_home() {
    let lone = Message::Assistant {
        content: "".into(),
        reasoning: Some(Reasoning {
            details: vec![reasoning_item("rs_9", "enc")],
            ..Reasoning::default()
        }),
        tool_calls: Vec::new(),
    };
    let messages = vec![
        Message::User {
            images: Vec::new(),
            content: "a".into(),
        },
        lone,
        Message::User {
            images: Vec::new(),
            content: "b".into(),
        },
    ];
    let cfg = ProviderConfig::new("p", "http://x/v1");
    let sent = body(&messages, &[], &cfg, StreamMode::Sse);
    assert!(
        sent.get("instructions").is_none(),
        "no system prompt, no instructions"
    );
    assert_eq!(
        sent["input"],
        json!([
            {"type": "message", "role": "user", "content": "a"},
            {"type": "message", "role": "user", "content": "b"},
        ])
    );
}

#[test]
fn tool_choice_and_extra_body_follow_the_responses_spelling() {
    let mut cfg = ProviderConfig::new("p", "http://x/v1");
    cfg.tool_choice = ToolChoice::Function {
        name: "read_file".into(),
    };
    cfg.extra_body.insert(
        "reasoning".into(),
        json!({"effort": "high", "summary": "auto"}),
    );
    for owned in [
        "input",
        "store",
        "include",
        "stream",
        "model",
        "instructions",
    ] {
        cfg.extra_body.insert(owned.into(), json!("hijack"));
    }
    let sent = body(&conversation(None), &tools(), &cfg, StreamMode::Sse);
    assert_eq!(
        sent["tool_choice"],
        json!({"type": "function", "name": "read_file"})
    );
    assert_eq!(
        sent["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert_eq!(sent["store"], false);
    assert_eq!(sent["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(sent["model"], "gpt-5-codex");
    assert!(!sent.to_string().contains("hijack"), "{sent}");
    cfg.tool_choice = ToolChoice::Omit;
    assert!(
        body(&conversation(None), &tools(), &cfg, StreamMode::Sse)
            .get("tool_choice")
            .is_none()
    );
    cfg.tool_choice = ToolChoice::Required;
    assert_eq!(
        body(&conversation(None), &tools(), &cfg, StreamMode::Sse)["tool_choice"],
        "required"
    );
}

// ---------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------

fn ev(value: Value) -> SseEvent {
    SseEvent {
        event: value["type"].as_str().map(str::to_string),
        data: value.to_string(),
    }
}

/// Feeds `events`; returns the completion (or the error), and what was reported.
fn read(
    events: impl IntoIterator<Item = SseEvent>,
) -> (Result<Completion, LlmError>, Vec<StreamEvent>) {
    let mut state = ResponsesState::default();
    let mut seen = Vec::new();
    let mut on_event = |e: StreamEvent| seen.push(e);
    for event in events {
        match state.handle(event, &site(), "m", &mut on_event) {
            Ok(Flow::Done) => return (Ok(state.take_completion()), seen),
            Ok(Flow::More) => {}
            Err(e) => return (Err(e), seen),
        }
    }
    let result = if state.finished() {
        Ok(state.take_completion())
    } else {
        Err(LlmError::cut(&site(), "m"))
    };
    (result, seen)
}

fn completed(output: Value, usage: Value) -> SseEvent {
    ev(json!({"type": "response.completed", "response": {
        "id": "resp_1", "status": "completed", "output": output, "usage": usage}}))
}

fn usage() -> Value {
    json!({"input_tokens": 120, "input_tokens_details": {"cached_tokens": 100},
           "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 30},
           "total_tokens": 160})
}

fn call_item(index: u64, call_id: &str, args: &str) -> Vec<SseEvent> {
    let id = format!("fc_{index}");
    vec![
        ev(
            json!({"type": "response.output_item.added", "output_index": index,
                  "item": {"id": id, "type": "function_call", "call_id": call_id,
                           "name": "read_file", "arguments": ""}}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.delta", "output_index": index,
                  "item_id": id, "delta": &args[..args.len() / 2]}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.delta", "output_index": index,
                  "item_id": id, "delta": &args[args.len() / 2..]}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.done", "output_index": index,
                  "item_id": id, "arguments": args}),
        ),
        ev(
            json!({"type": "response.output_item.done", "output_index": index,
                  "item": {"id": id, "type": "function_call", "status": "completed",
                           "call_id": call_id, "name": "read_file", "arguments": args}}),
        ),
    ]
}

/// A whole turn: reasoning summary, encrypted item, text, two calls, usage.
fn full_stream(secret: &str) -> Vec<SseEvent> {
    let item = reasoning_item("rs_1", secret);
    let mut events = vec![
        ev(
            json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        ),
        ev(
            json!({"type": "response.output_item.added", "output_index": 0,
                  "item": {"id": "rs_1", "type": "reasoning", "summary": []}}),
        ),
        ev(
            json!({"type": "response.reasoning_summary_text.delta", "output_index": 0,
                  "item_id": "rs_1", "summary_index": 0, "delta": "I should "}),
        ),
        ev(
            json!({"type": "response.reasoning_summary_text.delta", "output_index": 0,
                  "item_id": "rs_1", "summary_index": 0, "delta": "look."}),
        ),
        ev(json!({"type": "response.output_item.done", "output_index": 0, "item": item})),
        ev(
            json!({"type": "response.output_item.added", "output_index": 1,
                  "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}}),
        ),
        ev(
            json!({"type": "response.output_text.delta", "output_index": 1, "item_id": "msg_1",
                  "content_index": 0, "delta": "Look"}),
        ),
        ev(
            json!({"type": "response.output_text.delta", "output_index": 1, "item_id": "msg_1",
                  "content_index": 0, "delta": "ing."}),
        ),
        ev(
            json!({"type": "response.output_item.done", "output_index": 1,
                  "item": {"id": "msg_1", "type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": "Looking."}]}}),
        ),
    ];
    events.extend(call_item(2, "call_a", r#"{"path":"a.txt"}"#));
    events.extend(call_item(3, "call_b", r#"{"path":"b.txt"}"#));
    events.push(completed(json!([]), usage()));
    events
}

#[test]
fn a_whole_turn_reads_into_one_completion() {
    let (result, seen) = read(full_stream("gAAAA-secret"));
    let done = result.unwrap();
    assert_eq!(done.text, "Looking.");
    let reasoning = done.reasoning.unwrap();
    assert_eq!(reasoning.text, "I should look.");
    assert_eq!(
        reasoning.details,
        vec![reasoning_item("rs_1", "gAAAA-secret")]
    );
    assert_eq!(
        done.tool_calls,
        vec![
            ToolCall {
                id: "call_a".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"a.txt"}"#.into()
            },
            ToolCall {
                id: "call_b".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"b.txt"}"#.into()
            },
        ]
    );
    assert_eq!(done.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        done.usage,
        Some(Usage {
            input_tokens: 120,
            output_tokens: 40,
            cached_input_tokens: 100,
            cache_write_tokens: 0,
            estimated: false,
            cost: None,
        })
    );
    assert_eq!(
        seen,
        vec![
            StreamEvent::Reasoning("I should ".into()),
            StreamEvent::Reasoning("look.".into()),
            StreamEvent::Text("Look".into()),
            StreamEvent::Text("ing.".into()),
        ]
    );
}

/// The reasoning item goes back exactly as it came: read it from the stream, build the
/// next request with it, and find the same bytes in the body.
#[test]
fn encrypted_reasoning_round_trips_byte_for_byte() {
    let secret = "gAAAAB\u{e9}x+/=\"quoted\"\\n".repeat(50);
    let (result, _) = read(full_stream(&secret));
    let done = result.unwrap();
    let sent_item = reasoning_item("rs_1", &secret).to_string();
    let messages = vec![
        Message::System {
            content: "s".into(),
        },
        Message::User {
            images: Vec::new(),
            content: "u".into(),
        },
        Message::Assistant {
            content: done.text.into(),
            reasoning: done.reasoning,
            tool_calls: done.tool_calls,
        },
    ];
    let req = ChatRequest {
        model: "m",
        messages: &messages,
        tools: &[],
        effort: None,
        cache_key: None,
        images: &crate::images::NO_IMAGES,
        output_schema: None,
    };
    let cfg = ProviderConfig::new("p", "http://x/v1");
    let bytes = RequestBody::new(&req, &cfg, StreamMode::Sse)
        .to_bytes()
        .unwrap();
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.contains(&sent_item), "{text}");
    // Before the calls of its turn.
    let at_item = text.find(&sent_item).unwrap();
    assert!(at_item < text.find("function_call").unwrap());
}

#[test]
fn text_only_turn_stops() {
    let (result, _) = read(vec![
        ev(json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Hi"})),
        completed(
            json!([{"id": "m", "type": "message", "content": [{"type": "output_text", "text": "Hi"}]}]),
            json!({}),
        ),
    ]);
    let done = result.unwrap();
    assert_eq!(
        done.text, "Hi",
        "the final output repeats streamed text; it is not doubled"
    );
    assert_eq!(done.finish_reason, Some(FinishReason::Stop));
    assert_eq!(done.usage, None);
    assert!(done.tool_calls.is_empty());
}

/// A stream that ends before `response.completed` is cut, at any point; an end marker
/// before it does not make it whole.
#[test]
fn cut_streams_are_cut_wherever_they_end() {
    let events = full_stream("s");
    for n in 0..events.len() - 1 {
        let (result, _) = read(events[..n].to_vec());
        let err = result.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Network, "cut after {n}");
    }
    let mut with_done = events[..5].to_vec();
    with_done.push(SseEvent {
        event: None,
        data: "[DONE]".into(),
    });
    assert_eq!(read(with_done).0.unwrap_err().kind(), ErrorKind::Network);
}

#[test]
fn unknown_events_and_missing_fields_are_skipped() {
    let (result, _) = read(vec![
        ev(json!({"type": "response.web_search_call.searching", "output_index": 0})),
        ev(json!({"type": "response.future_thing", "weird": [1, 2, 3]})),
        ev(json!({"type": "response.output_text.delta"})),
        ev(json!({"type": "response.output_text.delta", "delta": 42})),
        ev(json!({"type": "response.output_item.added"})),
        ev(json!({"type": "response.output_item.done", "item": "not an object"})),
        ev(json!({"type": "response.function_call_arguments.delta", "output_index": "x"})),
        ev(json!({"no_type": true})),
        SseEvent {
            event: Some("response.output_text.delta".into()),
            data: json!({"delta": "named by the event line"}).to_string(),
        },
        ev(json!({"type": "response.output_text.delta", "output_index": 7, "delta": "ok"})),
        ev(json!({"type": "response.completed"})),
    ]);
    let done = result.unwrap();
    assert_eq!(done.text, "named by the event lineok");
    assert_eq!(done.finish_reason, Some(FinishReason::Stop));
}

#[test]
fn pieces_before_their_item_and_items_out_of_order() {
    let args = r#"{"path":"x"}"#;
    let (result, _) = read(vec![
        // Arguments before the item that owns them, named only by item id.
        ev(
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_9", "delta": "{\"path\""}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_9", "delta": ":\"x\"}"}),
        ),
        // The second call's item arrives whole before the first's added event.
        ev(
            json!({"type": "response.output_item.done", "output_index": 5,
                  "item": {"id": "fc_5", "type": "function_call", "call_id": "c5", "name": "list", "arguments": "{}"}}),
        ),
        ev(
            json!({"type": "response.output_item.added", "output_index": 0,
                  "item": {"id": "fc_9", "type": "function_call", "call_id": "c9", "name": "read_file"}}),
        ),
        completed(json!([]), json!({"input_tokens": "12", "output_tokens": 3})),
    ]);
    let done = result.unwrap();
    assert_eq!(done.tool_calls.len(), 2, "{:?}", done.tool_calls);
    assert_eq!(done.tool_calls[0].name, "read_file");
    assert_eq!(done.tool_calls[0].id, "c9");
    assert_eq!(done.tool_calls[0].arguments, args);
    assert_eq!(done.tool_calls[1].name, "list");
    assert_eq!(done.usage.unwrap().input_tokens, 12);
}

/// What did not stream comes from the final `response.output`: calls, text and
/// reasoning, each once.
#[test]
fn the_final_output_fills_in_what_did_not_stream() {
    let item = reasoning_item("rs_7", "enc");
    let (result, seen) = read(vec![completed(
        json!([item, {"id": "m1", "type": "message", "content": [{"type": "output_text", "text": "Done."}]},
               {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{\"command\":\"ls\"}"}]),
        usage(),
    )]);
    let done = result.unwrap();
    assert_eq!(done.text, "Done.");
    assert_eq!(done.tool_calls[0].arguments, r#"{"command":"ls"}"#);
    assert_eq!(done.reasoning.as_ref().unwrap().details, vec![item]);
    assert_eq!(done.reasoning.unwrap().text, "I should look.");
    assert_eq!(
        seen,
        vec![
            StreamEvent::Reasoning("I should look.".into()),
            StreamEvent::Text("Done.".into())
        ]
    );
}

#[test]
fn the_done_arguments_win_over_the_deltas() {
    let (result, _) = read(vec![
        ev(
            json!({"type": "response.output_item.added", "output_index": 0,
                  "item": {"id": "fc", "type": "function_call", "call_id": "c", "name": "n"}}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"a\":"}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.done", "output_index": 0, "arguments": "{\"a\":1}"}),
        ),
        // A late delta after done changes nothing.
        ev(
            json!({"type": "response.output_item.done", "output_index": 0,
                  "item": {"id": "fc", "type": "function_call", "call_id": "c", "name": "n", "arguments": "{\"a\":1}"}}),
        ),
        ev(
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "junk"}),
        ),
        completed(json!([]), json!({})),
    ]);
    assert_eq!(result.unwrap().tool_calls[0].arguments, r#"{"a":1}"#);
}

#[test]
fn huge_arguments_are_read_and_a_runaway_answer_is_refused() {
    let big = format!("{{\"content\":\"{}\"}}", "x".repeat(4 << 20));
    let mut events = call_item(0, "c", &big);
    events.push(completed(json!([]), json!({})));
    let done = read(events).0.unwrap();
    assert_eq!(done.tool_calls[0].arguments, big);

    let piece = "y".repeat(1 << 20);
    let runaway = (0..80).map(|_| {
        ev(json!({"type": "response.output_text.delta", "output_index": 0, "delta": piece}))
    });
    let err = read(runaway).0.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    assert!(err.to_string().contains("MiB"), "{err}");
}

#[test]
fn incomplete_answers_say_why() {
    for (reason, finish) in [
        ("max_output_tokens", FinishReason::Length),
        ("content_filter", FinishReason::ContentFilter),
        ("other", FinishReason::Other("other".into())),
    ] {
        let (result, _) = read(vec![
            ev(json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Par"})),
            ev(
                json!({"type": "response.incomplete", "response": {"status": "incomplete",
                      "incomplete_details": {"reason": reason}, "output": [], "usage": usage()}}),
            ),
        ]);
        let done = result.unwrap();
        assert_eq!(done.finish_reason, Some(finish));
        assert_eq!(done.text, "Par");
    }
}

/// Errors are classified as the Chat wire's are: the same kinds, so the same retries.
#[test]
fn errors_are_classified_like_the_chat_wire() {
    let cases = [
        (
            json!({"type": "error", "code": "rate_limit_exceeded", "message": "Rate limit reached", "param": null}),
            ErrorKind::RateLimit,
        ),
        (
            json!({"type": "response.failed", "response": {"status": "failed",
                   "error": {"code": "context_length_exceeded", "message": "Your input exceeds the context window of this model."}}}),
            ErrorKind::ContextTooLong,
        ),
        (
            json!({"type": "response.failed", "response": {"status": "failed",
                   "error": {"code": "server_error", "message": "The server had an error."}}}),
            ErrorKind::Server,
        ),
        (
            json!({"type": "response.failed", "response": {"status": "failed", "error": null}}),
            ErrorKind::Server,
        ),
        (
            json!({"type": "error", "error": {"type": "invalid_request_error", "code": "invalid_api_key", "message": "Incorrect API key"}}),
            ErrorKind::Auth,
        ),
        (
            json!({"error": {"message": "quota exceeded", "type": "insufficient_quota"}}),
            ErrorKind::Quota,
        ),
    ];
    for (event, kind) in cases {
        let err = read(vec![ev(event.clone())]).0.unwrap_err();
        assert_eq!(err.kind(), kind, "{event}");
    }
    let err = read(vec![SseEvent {
        event: Some("error".into()),
        data: "overloaded, try later".into(),
    }])
    .0
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Server);
    assert!(err.to_string().contains("overloaded"), "{err}");
    let not_json = read(vec![SseEvent {
        event: None,
        data: "{not json".into(),
    }]);
    assert_eq!(not_json.0.unwrap_err().kind(), ErrorKind::Protocol);
}

#[test]
fn a_non_streaming_body_reads_like_the_stream() {
    let item = reasoning_item("rs_1", "enc");
    let body = json!({"id": "resp_1", "object": "response", "status": "completed", "error": null,
        "output": [item, {"id": "m", "type": "message", "content": [{"type": "output_text", "text": "Hi"}]},
                   {"id": "fc", "type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"}],
        "usage": usage()});
    let mut seen = Vec::new();
    let done = parse_body(body.to_string().as_bytes(), &site(), "m", &mut |e| {
        seen.push(e)
    })
    .unwrap();
    assert_eq!(done.text, "Hi");
    assert_eq!(done.tool_calls[0].id, "c1");
    assert_eq!(done.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(done.reasoning.unwrap().details, vec![item]);
    assert_eq!(done.usage.unwrap().cached_input_tokens, 100);
    assert_eq!(seen.len(), 2);

    let failed = json!({"status": "failed", "output": [], "error": {"code": "rate_limit_exceeded", "message": "slow"}});
    let err = parse_body(failed.to_string().as_bytes(), &site(), "m", &mut |_| {}).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RateLimit);
    let chat = json!({"choices": [{"message": {"content": "hi"}}]});
    let err = parse_body(chat.to_string().as_bytes(), &site(), "m", &mut |_| {}).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    let err = parse_body(b"<html>", &site(), "m", &mut |_| {}).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
}

/// Any prefix of any event, fed as data, never panics.
#[test]
fn every_prefix_of_every_event_is_survived() {
    for event in full_stream("secret") {
        for end in 0..=event.data.len() {
            if !event.data.is_char_boundary(end) {
                continue;
            }
            let cut = SseEvent {
                event: event.event.clone(),
                data: event.data[..end].to_string(),
            };
            let _ = read(vec![cut]);
        }
    }
}

/// The session's effort goes as `reasoning.effort`, merged into a configured `reasoning`
/// object; on OpenAI the session id goes as `prompt_cache_key`; elsewhere neither key.
#[test]
fn effort_and_the_cache_key_follow_the_responses_spelling() {
    use crate::protocol::Effort;
    let messages = conversation(None);
    let tools = tools();
    let sent = |cfg: &ProviderConfig, effort| -> Value {
        let req = ChatRequest {
            model: "gpt-5-codex",
            messages: &messages,
            tools: &tools,
            effort,
            cache_key: Some("session-1"),
            images: &crate::images::NO_IMAGES,
            output_schema: None,
        };
        serde_json::from_slice(
            &RequestBody::new(&req, cfg, StreamMode::Sse)
                .to_bytes()
                .unwrap(),
        )
        .unwrap()
    };
    let mut openai = ProviderConfig::new("openai", "https://api.openai.com/v1");
    openai.extra_body.insert(
        "reasoning".into(),
        json!({"summary": "auto", "effort": "low"}),
    );
    let v = sent(&openai, Some(Effort::High));
    assert_eq!(v["reasoning"], json!({"summary": "auto", "effort": "high"}));
    assert_eq!(v["prompt_cache_key"], "session-1");
    let v = sent(&openai, None);
    assert_eq!(v["reasoning"], json!({"summary": "auto", "effort": "low"}));
    let v = sent(&openai, Some(Effort::Off));
    assert_eq!(v["reasoning"]["effort"], "none");
    let local = ProviderConfig::new("local", "http://127.0.0.1:9/v1");
    let v = sent(&local, None);
    assert!(
        v.get("prompt_cache_key").is_none() && v.get("reasoning").is_none(),
        "{v}"
    );
}

#[test]
fn images_go_as_input_image_parts() {
    let store = crate::images::ImageStore::default();
    let png = b"\x89PNG\r\n\x1a\nabc".to_vec();
    let image = crate::images::Image::from_bytes(png, "a.png", 100).unwrap();
    let image = store.put(&image).unwrap();
    let messages = vec![
        Message::System {
            content: "sys".into(),
        },
        Message::User {
            content: "look".into(),
            images: vec![image.clone()],
        },
    ];
    let data = store.load([&image]);
    let req = ChatRequest {
        model: "gpt-5-codex",
        messages: &messages,
        tools: &[],
        effort: None,
        cache_key: None,
        images: &data,
        output_schema: None,
    };
    let cfg = ProviderConfig::new("openai", "https://api.openai.com/v1");
    let b: Value = serde_json::from_slice(
        &RequestBody::new(&req, &cfg, StreamMode::Sse)
            .to_bytes()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        b["input"][0],
        json!({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgphYmM="},
        ]})
    );
}

#[test]
fn an_output_schema_is_asked_as_text_format_only_when_the_provider_takes_it() {
    let schema = json!({"type": "object", "required": ["verdict"]});
    let messages = conversation(None);
    let mut cfg = ProviderConfig::new("openai", "https://api.openai.com/v1");
    let held = |cfg: &ProviderConfig| {
        let req = ChatRequest {
            model: "gpt-5-codex",
            messages: &messages,
            tools: &[],
            effort: None,
            cache_key: None,
            output_schema: Some(&schema),
            images: &crate::images::NO_IMAGES,
        };
        let bytes = RequestBody::new(&req, cfg, StreamMode::Sse)
            .to_bytes()
            .unwrap();
        serde_json::from_slice::<Value>(&bytes).unwrap()
    };
    assert!(held(&cfg).get("text").is_none(), "off by default");
    cfg.structured_output = crate::llm::StructuredOutput::JsonSchema;
    assert_eq!(
        held(&cfg)["text"],
        json!({"format": {"type": "json_schema", "name": "output", "schema": schema}})
    );
}
