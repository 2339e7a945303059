//! Tests of the wire format: request bodies (content, tool_choice, extras) and the
//! chunks and usage read back.

use super::*;
use crate::llm::{ToolChoice, ToolSpec};
use serde_json::json;

fn chunk(v: Value) -> ChatChunk {
    serde_json::from_value(v).unwrap()
}

fn body(req: &ChatRequest<'_>, cfg: &ProviderConfig) -> Value {
    serde_json::from_slice(&RequestBody::new(req, cfg).to_bytes().unwrap()).unwrap()
}

/// A request for model "m" over `messages`, offering `tools`.
fn request<'a>(messages: &'a [Message], tools: &'a [ToolSpec]) -> ChatRequest<'a> {
    ChatRequest {
        model: "m",
        messages,
        tools,
    }
}

fn provider() -> ProviderConfig {
    ProviderConfig::new("p", "http://x/v1")
}

/// The body as the bytes send it, for counting how often a key appears.
fn body_text(req: &ChatRequest<'_>, cfg: &ProviderConfig) -> String {
    String::from_utf8(RequestBody::new(req, cfg).to_bytes().unwrap()).unwrap()
}

fn read_file_spec() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "read_file".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object"}),
    }]
}

fn conversation() -> Vec<Message> {
    vec![
        Message::System {
            content: "sys".into(),
        },
        Message::User {
            content: "hi".into(),
        },
        Message::Assistant {
            content: Default::default(),
            reasoning: Some("think".into()),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"a"}"#.into(),
            }],
        },
        Message::Tool {
            tool_call_id: "c1".into(),
            content: "text".into(),
        },
    ]
}

#[test]
fn request_body_shape() {
    let messages = conversation();
    let tools = read_file_spec();
    let req = request(&messages, &tools);
    let cfg = provider();
    assert_eq!(
        body(&req, &cfg),
        json!({
            "model": "m",
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}
                ]},
                {"role": "tool", "content": "text", "tool_call_id": "c1"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "read_file", "description": "Read a file",
                "parameters": {"type": "object"}}}],
            "stream": true,
            "stream_options": {"include_usage": true},
            "tool_choice": "auto",
        })
    );
}

#[test]
fn tool_choice_is_sent_with_tools_only_and_follows_the_config() {
    let messages = conversation();
    let tools = read_file_spec();
    let with_tools = request(&messages, &tools);
    let without_tools = ChatRequest {
        tools: &[],
        ..with_tools
    };
    let mut cfg = provider();
    assert_eq!(cfg.tool_choice, ToolChoice::Auto);
    assert_eq!(body(&with_tools, &cfg)["tool_choice"], "auto");
    assert!(body(&without_tools, &cfg).get("tool_choice").is_none());
    cfg.tool_choice = ToolChoice::Required;
    assert_eq!(body(&with_tools, &cfg)["tool_choice"], "required");
    cfg.tool_choice = ToolChoice::Function {
        name: "read_file".into(),
    };
    assert_eq!(
        body(&with_tools, &cfg)["tool_choice"],
        json!({"type": "function", "function": {"name": "read_file"}})
    );
    cfg.tool_choice = ToolChoice::Omit;
    assert!(body(&with_tools, &cfg).get("tool_choice").is_none());
}

#[test]
fn assistant_content_is_always_a_string() {
    let messages = conversation();
    let req = request(&messages, &[]);
    let v = body(&req, &provider());
    for m in v["messages"].as_array().unwrap() {
        assert!(m["content"].is_string(), "{m}");
    }
    assert_eq!(v["messages"][2]["content"], "");
}

#[test]
fn request_options_follow_the_provider_config() {
    let messages = conversation();
    let req = request(&messages, &[]);
    let mut cfg = provider();
    cfg.usage_reporting = UsageReporting::Omit;
    cfg.reasoning_echo = ReasoningEcho::AsReasoningContent;
    let v = body(&req, &cfg);
    assert!(v.get("stream_options").is_none());
    assert!(v.get("tools").is_none());
    assert_eq!(v["messages"][2]["reasoning_content"], "think");

    cfg.usage_reporting = UsageReporting::Request;
    cfg.stream_mode = StreamMode::NonStreaming;
    let v = body(&req, &cfg);
    assert_eq!(v["stream"], false);
    assert!(v.get("stream_options").is_none());
}

#[test]
fn chunks_are_read_leniently() {
    let c = chunk(json!({
        "choices": [{"index": 0, "delta": {"content": "hi", "reasoning": "r",
            "tool_calls": null, "role": "assistant", "extra": [1]},
            "finish_reason": "weird_reason", "logprobs": null}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2,
            "prompt_tokens_details": {"cached_tokens": 4}},
        "system_fingerprint": "x"
    }));
    let choice = &c.choices[0];
    let delta = choice.delta.as_ref().unwrap();
    assert_eq!(delta.content.as_deref(), Some("hi"));
    assert_eq!(delta.reasoning_text(), Some("r"));
    assert_eq!(
        finish_reason(choice.finish_reason.as_deref().unwrap()),
        Some(FinishReason::Other("weird_reason".into()))
    );
    let usage = c.usage.unwrap().to_usage();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cached_input_tokens
        ),
        (10, 2, 4)
    );
    let llama = chunk(
        json!({"choices": [], "timings": {"prompt_n": 150, "cache_n": 38, "predicted_n": 12}}),
    );
    let usage = llama.reported_usage().unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cached_input_tokens,
            usage.estimated
        ),
        (188, 12, 38, false)
    );
    let both = chunk(json!({"usage": {"prompt_tokens": 5}, "timings": {"prompt_n": 150}}));
    assert_eq!(both.reported_usage().unwrap().input_tokens, 5, "usage wins");
    assert!(
        chunk(json!({"timings": {"predicted_n": 3}}))
            .reported_usage()
            .is_none()
    );
    let empty = chunk(json!({"choices": null, "usage": null}));
    assert!(empty.choices.is_empty() && empty.usage.is_none());
    assert_eq!(finish_reason(""), None);
    assert_eq!(finish_reason("tool_calls"), Some(FinishReason::ToolCalls));
}

#[test]
fn error_objects_in_every_shape() {
    let info = ErrorInfo::from_body(
        r#"{"error":{"message":"You exceeded your quota","type":"insufficient_quota","code":429}}"#,
    );
    assert_eq!(info.message, "You exceeded your quota");
    assert_eq!(info.codes, vec!["insufficient_quota".to_string()]);
    assert_eq!(info.status, Some(429));
    assert_eq!(
        ErrorInfo::from_body("<html>bad gateway</html>").message,
        "<html>bad gateway</html>"
    );
    assert_eq!(ErrorInfo::from_body(r#"{"error":"nope"}"#).message, "nope");
    assert_eq!(
        ErrorInfo::from_body(r#"{"detail":"Not Found"}"#).message,
        "Not Found"
    );
}

fn piece(index: Option<u32>, id: Option<&str>, name: Option<&str>, args: &str) -> ToolCallDelta {
    ToolCallDelta {
        index,
        id: id.map(Into::into),
        function: Some(FunctionDelta {
            name: name.map(Into::into),
            arguments: Some(args.into()),
        }),
    }
}

/// What the accumulator makes of `pieces`, pushed in order.
fn merge(pieces: &[ToolCallDelta]) -> Vec<ToolCall> {
    let mut acc = ToolCallAccumulator::new();
    pieces.iter().for_each(|p| acc.push(p));
    acc.finish()
}

#[test]
fn tool_calls_merge_by_index_in_pieces_and_in_parallel() {
    let calls = merge(&[
        piece(Some(0), Some("a"), Some("read_file"), ""),
        piece(Some(1), Some("b"), Some("glob"), "{\"pat"),
        piece(Some(0), None, None, "{\"path\""),
        piece(Some(1), None, None, "tern\":\"*\"}"),
        piece(Some(0), None, None, ":\"x\"}"),
    ]);
    assert_eq!(
        calls,
        vec![
            ToolCall {
                id: "a".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"x"}"#.into()
            },
            ToolCall {
                id: "b".into(),
                name: "glob".into(),
                arguments: r#"{"pattern":"*"}"#.into()
            },
        ]
    );
}

#[test]
fn tool_calls_without_index_fall_back_to_id_then_latest() {
    let calls = merge(&[
        piece(None, Some("a"), Some("list"), "{"),
        piece(None, Some("b"), Some("glob"), "{}"),
        piece(None, Some("a"), None, "}"),
        piece(None, None, None, ""),
    ]);
    assert_eq!(calls[0].arguments, "{}");
    assert_eq!(calls[0].name, "list");
    assert_eq!(calls[1].id, "b");
    assert_eq!(calls.len(), 2);
}

#[test]
fn empty_arguments_and_missing_ids() {
    let calls = merge(&[
        piece(Some(0), None, Some("list"), ""),
        piece(Some(1), None, Some("glob"), "  "),
    ]);
    assert_eq!(calls[0].id, "call_0");
    assert_eq!(calls[1].id, "call_1");
    assert!(calls.iter().all(|c| c.arguments == "{}"));
}

#[test]
fn same_index_with_new_id_is_a_new_call_and_repeated_names_are_not_doubled() {
    let calls = merge(&[
        piece(Some(0), Some("a"), Some("list"), "{}"),
        piece(Some(0), Some("b"), Some("glob"), "{}"),
        piece(Some(0), Some("b"), Some("glob"), ""),
    ]);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].name, "glob");
}

#[test]
fn non_streaming_body_and_object_arguments() {
    let c = chunk(
        json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "x", "type": "function",
             "function": {"name": "read_file", "arguments": {"path": "a"}}}]}}]}),
    );
    let msg = c.choices[0].message.as_ref().unwrap();
    assert_eq!(merge(&msg.tool_calls)[0].arguments, r#"{"path":"a"}"#);
}

// --- provider settings: max_output_tokens, extra_body ---

#[test]
fn max_output_tokens_is_sent_as_max_tokens_only_when_set() {
    let messages = conversation();
    let req = request(&messages, &[]);
    let mut cfg = provider();
    assert!(body(&req, &cfg).get("max_tokens").is_none());
    cfg.max_output_tokens = Some(4096);
    assert_eq!(body(&req, &cfg)["max_tokens"], json!(4096));
}

#[test]
fn extra_body_keys_are_merged_at_the_top_level() {
    let messages = conversation();
    let req = request(&messages, &[]);
    let mut cfg = provider();
    let extra = json!({
        "options": {"num_ctx": 8192},
        "chat_template_kwargs": {"enable_thinking": false},
        "model": "not-this-one",
        "stream": false,
    });
    let Value::Object(map) = extra else {
        panic!("an object");
    };
    cfg.extra_body = map;
    let sent = body(&req, &cfg);
    assert_eq!(sent["options"], json!({"num_ctx": 8192}));
    assert_eq!(
        sent["chat_template_kwargs"],
        json!({"enable_thinking": false})
    );
    // Owned keys are never taken from extra_body, and no key appears twice.
    assert_eq!(sent["model"], json!("m"));
    assert_eq!(sent["stream"], json!(true));
    let text = body_text(&req, &cfg);
    assert_eq!(text.matches("\"model\"").count(), 1, "{text}");
    assert_eq!(text.matches("\"stream\"").count(), 1, "{text}");
}

#[test]
fn extra_body_max_tokens_yields_to_max_output_tokens() {
    let messages = conversation();
    let req = request(&messages, &[]);
    let mut cfg = provider();
    cfg.extra_body.insert("max_tokens".into(), json!(100));
    assert_eq!(body(&req, &cfg)["max_tokens"], json!(100));
    cfg.max_output_tokens = Some(200);
    let text = body_text(&req, &cfg);
    assert_eq!(text.matches("\"max_tokens\"").count(), 1, "{text}");
    assert_eq!(body(&req, &cfg)["max_tokens"], json!(200));
}

#[test]
fn a_cost_the_provider_reports_is_kept_unless_the_user_priced_the_model() {
    let usage: WireUsage = serde_json::from_value(json!({
        "prompt_tokens": 1000, "completion_tokens": 10, "cost": 0.0123
    }))
    .unwrap();
    let usage = usage.to_usage();
    assert_eq!(usage.cost.map(|c| c.micros()), Some(12_300));
    // No price configured: the provider's figure stays.
    let none = crate::cost::PriceTable::default();
    assert_eq!(none.priced("m", usage).cost, usage.cost);
    // A price configured wins.
    let mut priced = crate::cost::PriceTable::default();
    priced.insert(
        "m".into(),
        crate::cost::ModelPrice {
            input: 1.0,
            output: 1.0,
            cached_input: None,
        },
    );
    assert_eq!(
        priced.priced("m", usage).cost.map(|c| c.micros()),
        Some(1010)
    );
    for odd in [json!("0.5"), json!(-1.0), json!(null), json!({"x": 1})] {
        let usage: WireUsage =
            serde_json::from_value(json!({"prompt_tokens": 1, "cost": odd})).unwrap();
        assert_eq!(usage.to_usage().cost, None, "{odd}");
    }
}
