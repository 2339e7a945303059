//! Tests of the wire format: request bodies (content, tool_choice, extras) and the
//! chunks and usage read back.

use super::*;
use crate::llm::{ToolChoice, ToolSpec};
use serde_json::json;

fn chunk(v: Value) -> ChatChunk {
    serde_json::from_value(v).unwrap()
}

fn body(req: &ChatRequest<'_>, cfg: &ProviderConfig) -> Value {
    serde_json::from_slice(&RequestBody::new(req, cfg, echo_of(cfg)).to_bytes().unwrap()).unwrap()
}

/// A request for model "m" over `messages`, offering `tools`.
fn request<'a>(messages: &'a [Message], tools: &'a [ToolSpec]) -> ChatRequest<'a> {
    ChatRequest {
        model: "m",
        messages,
        tools,
        effort: None,
        cache_key: None,
        images: &crate::images::NO_IMAGES,
        output_schema: None,
    }
}

/// The echo `cfg` decides for model "m" with nothing learned.
fn echo_of(cfg: &ProviderConfig) -> Echo {
    crate::llm::echo::decide(cfg.reasoning_echo, None, &cfg.base_url, "m").0
}

fn provider() -> ProviderConfig {
    ProviderConfig::new("p", "http://x/v1")
}

/// The body as the bytes send it, for counting how often a key appears.
fn body_text(req: &ChatRequest<'_>, cfg: &ProviderConfig) -> String {
    String::from_utf8(RequestBody::new(req, cfg, echo_of(cfg)).to_bytes().unwrap()).unwrap()
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
            images: Vec::new(),
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
    cfg.reasoning_echo = crate::llm::ReasoningEcho::Always;
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
fn echoed_reasoning_goes_back_in_its_own_field_or_as_details_verbatim() {
    let details = vec![
        json!({"type": "reasoning.text", "text": "why", "signature": "c2ln/+==", "format": "anthropic-claude-v1", "index": 0}),
        json!({"type": "reasoning.encrypted", "data": "ZW5j", "id": null, "format": "unknown", "index": 1}),
    ];
    let assistant = |reasoning: Reasoning| Message::Assistant {
        content: "".into(),
        reasoning: Some(reasoning),
        tool_calls: vec![ToolCall {
            id: "c1".into(),
            name: "bash".into(),
            arguments: "{}".into(),
        }],
    };
    let messages = vec![
        Message::User {
            images: Vec::new(),
            content: "u".into(),
        },
        assistant(Reasoning::text("a", ReasoningField::ReasoningContent)),
        assistant(Reasoning::text("b", ReasoningField::Reasoning)),
        assistant(Reasoning {
            text: "why".into(),
            field: ReasoningField::Reasoning,
            details: details.clone(),
            source: None,
        }),
    ];
    let req = request(&messages, &[]);
    let cfg = provider();
    let sent = |echo| -> Value {
        serde_json::from_slice(&RequestBody::new(&req, &cfg, echo).to_bytes().unwrap()).unwrap()
    };
    let v = sent(Echo::Send);
    let m = &v["messages"];
    assert_eq!(m[1]["reasoning_content"], "a");
    assert!(m[1].get("reasoning").is_none());
    assert_eq!(m[2]["reasoning"], "b");
    assert!(m[2].get("reasoning_content").is_none());
    assert_eq!(m[3]["reasoning_details"], json!(details));
    assert!(m[3].get("reasoning").is_none() && m[3].get("reasoning_content").is_none());
    let text =
        String::from_utf8(RequestBody::new(&req, &cfg, Echo::Send).to_bytes().unwrap()).unwrap();
    assert!(
        text.contains(&serde_json::to_string(&details).unwrap()),
        "{text}"
    );
    let v = sent(Echo::DetailsOnly);
    assert_eq!(v["messages"][3]["reasoning_details"], json!(details));
    for m in &v["messages"].as_array().unwrap()[1..3] {
        assert!(
            m.get("reasoning").is_none() && m.get("reasoning_content").is_none(),
            "{m}"
        );
    }
    let v = sent(Echo::Omit);
    for m in v["messages"].as_array().unwrap() {
        for field in ["reasoning", "reasoning_content", "reasoning_details"] {
            assert!(m.get(field).is_none(), "{m}");
        }
    }
}

#[test]
fn reasoning_details_are_read_from_messages_and_deltas() {
    let c = chunk(
        json!({"choices": [{"message": {"content": "x", "reasoning_details": [{"type": "reasoning.text", "text": "t"}]}}]}),
    );
    let m = c.choices[0].message.as_ref().unwrap();
    assert_eq!(
        m.reasoning_details,
        vec![json!({"type": "reasoning.text", "text": "t"})]
    );
    let c = chunk(json!({"choices": [{"delta": {"reasoning_details": null}}]}));
    assert!(
        c.choices[0]
            .delta
            .as_ref()
            .unwrap()
            .reasoning_details
            .is_empty()
    );
    let c = chunk(json!({"choices": [{"delta": {"reasoning_details": {"odd": 1}}}]}));
    assert!(
        c.choices[0]
            .delta
            .as_ref()
            .unwrap()
            .reasoning_details
            .is_empty()
    );
}

/// A session that moved from the Responses wire to a Chat endpoint: the Responses
/// reasoning items (encrypted, OpenAI's) never go out as `reasoning_details` or text.
#[test]
fn responses_reasoning_items_never_go_out_on_the_chat_wire() {
    let messages = vec![
        Message::User {
            images: Vec::new(),
            content: "u".into(),
        },
        Message::Assistant {
            content: "".into(),
            reasoning: Some(Reasoning {
                text: "summary".into(),
                field: ReasoningField::ResponsesItems,
                details: vec![
                    json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "RU5D"}),
                ],
                source: None,
            }),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "bash".into(),
                arguments: "{}".into(),
            }],
        },
    ];
    let req = request(&messages, &[]);
    let cfg = provider();
    for echo in [Echo::Send, Echo::DetailsOnly, Echo::Omit] {
        let text =
            String::from_utf8(RequestBody::new(&req, &cfg, echo).to_bytes().unwrap()).unwrap();
        assert!(
            !text.contains("RU5D") && !text.contains("summary"),
            "{echo:?}: {text}"
        );
    }
}

#[test]
fn the_effort_goes_in_each_dialects_field_and_nowhere_without_one() {
    use crate::llm::effort::{DialectChoice, EffortDialect};
    use crate::protocol::Effort;
    let messages = conversation();
    let effort_keys = [
        "reasoning_effort",
        "reasoning",
        "chat_template_kwargs",
        "think",
        "thinking",
    ];
    let cases = [
        (
            "https://api.openai.com/v1",
            "o3",
            json!({"reasoning_effort": "high"}),
        ),
        (
            "https://api.deepseek.com/v1",
            "deepseek-reasoner",
            json!({"reasoning_effort": "high"}),
        ),
        (
            "https://openrouter.ai/api/v1",
            "anthropic/claude-sonnet-4",
            json!({"reasoning": {"effort": "high"}}),
        ),
        (
            "http://127.0.0.1:8000/v1",
            "Qwen/Qwen3-8B",
            json!({"chat_template_kwargs": {"enable_thinking": true}}),
        ),
        (
            "http://127.0.0.1:11434/v1",
            "qwen3:8b",
            json!({"think": true, "reasoning_effort": "high"}),
        ),
    ];
    for (url, model, want) in cases {
        let cfg = ProviderConfig::new("p", url);
        let req = ChatRequest {
            model,
            effort: Some(Effort::High),
            ..request(&messages, &[])
        };
        let sent = body(&req, &cfg);
        let got: serde_json::Map<String, Value> = effort_keys
            .iter()
            .filter_map(|k| sent.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect();
        assert_eq!(Value::Object(got), want, "{url} {model}");
        // Without an effort, none of those keys is sent to any of them.
        let plain = body(
            &ChatRequest {
                effort: None,
                ..req
            },
            &cfg,
        );
        for key in effort_keys {
            assert!(
                plain.get(key).is_none(),
                "{url}: {key} sent without an effort"
            );
        }
    }
    // A configured dialect wins over the URL; extra_body's own object is merged.
    let mut cfg = provider();
    cfg.effort_dialect = DialectChoice::Configured {
        dialect: EffortDialect::ChatTemplateKwargs,
    };
    cfg.extra_body.insert(
        "chat_template_kwargs".into(),
        json!({"enable_thinking": true, "preserve_thinking": true}),
    );
    let req = ChatRequest {
        effort: Some(Effort::Off),
        ..request(&messages, &[])
    };
    assert_eq!(
        body(&req, &cfg)["chat_template_kwargs"],
        json!({"enable_thinking": false, "preserve_thinking": true})
    );
    assert_eq!(
        body_text(&req, &cfg)
            .matches("chat_template_kwargs")
            .count(),
        1
    );
    // extra_body's plain value under the key gives way to the effort.
    cfg.effort_dialect = DialectChoice::FromEndpoint;
    cfg.extra_body
        .insert("reasoning_effort".into(), json!("low"));
    let req = ChatRequest {
        effort: Some(Effort::Medium),
        ..request(&messages, &[])
    };
    assert_eq!(body(&req, &cfg)["reasoning_effort"], "medium");
    assert_eq!(body_text(&req, &cfg).matches("reasoning_effort").count(), 1);
}

#[test]
fn usage_is_read_from_every_cache_shape() {
    let read = |usage: Value| chunk(json!({"choices": [], "usage": usage})).reported_usage();
    // (shape, body, input, cached, written, output)
    let cases = [
        (
            "OpenAI",
            json!({"prompt_tokens": 2000, "completion_tokens": 10,
                   "prompt_tokens_details": {"cached_tokens": 1536}}),
            (2000, 1536, 0, 10),
        ),
        (
            "OpenRouter (Anthropic route)",
            json!({"prompt_tokens": 10000, "completion_tokens": 100, "cost": 0.01,
                   "cache_discount": 0.02,
                   "prompt_tokens_details": {"cached_tokens": 8000, "cache_write_tokens": 1000}}),
            (10000, 8000, 1000, 100),
        ),
        (
            "Anthropic",
            json!({"input_tokens": 50, "output_tokens": 7,
                   "cache_read_input_tokens": 900, "cache_creation_input_tokens": 100}),
            (1050, 900, 100, 7),
        ),
        (
            "LiteLLM (Anthropic behind the Chat API)",
            json!({"prompt_tokens": 1050, "completion_tokens": 7,
                   "cache_read_input_tokens": 900, "cache_creation_input_tokens": 100}),
            (1050, 900, 100, 7),
        ),
        (
            "DeepSeek",
            json!({"prompt_tokens": 300, "completion_tokens": 3,
                   "prompt_cache_hit_tokens": 256, "prompt_cache_miss_tokens": 44}),
            (300, 256, 0, 3),
        ),
        (
            "DeepSeek without prompt_tokens",
            json!({"prompt_cache_hit_tokens": 256, "prompt_cache_miss_tokens": 44}),
            (300, 256, 0, 0),
        ),
        (
            "Responses",
            json!({"input_tokens": 5000, "output_tokens": 20,
                   "input_tokens_details": {"cached_tokens": 4096}}),
            (5000, 4096, 0, 20),
        ),
        (
            "nonsense counts are capped by the input",
            json!({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 50,
                   "cache_write_tokens": 50}}),
            (10, 10, 0, 0),
        ),
    ];
    for (shape, body, (input, cached, written, output)) in cases {
        let u = read(body).unwrap();
        assert_eq!(
            (
                u.input_tokens,
                u.cached_input_tokens,
                u.cache_write_tokens,
                u.output_tokens
            ),
            (input, cached, written, output),
            "{shape}"
        );
        assert!(!u.estimated, "{shape}");
    }
}

#[test]
fn cache_markers_go_only_where_the_route_wants_them() {
    use crate::llm::cache::PromptCache;
    let messages = conversation();
    let req = ChatRequest {
        cache_key: Some("20261127-000000-abcdef"),
        output_schema: None,
        ..request(&messages, &[])
    };
    let marked = |body: &Value| -> Vec<usize> {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .filter(|(_, m)| m["content"].is_array())
            .map(|(i, _)| i)
            .collect()
    };
    // Default (auto) on a local server: plain strings, no key.
    let local = provider();
    let text = body_text(&req, &local);
    assert!(
        !text.contains("cache_control") && !text.contains("prompt_cache_key"),
        "{text}"
    );
    // OpenRouter's Anthropic models: breakpoints, as text parts.
    let openrouter = ProviderConfig::new("p", "https://openrouter.ai/api/v1");
    let anthropic = ChatRequest {
        model: "anthropic/claude-sonnet-4",
        ..req
    };
    let sent = body(&anthropic, &openrouter);
    // The system prompt, the user's message and the tool result: the assistant message
    // has only tool calls.
    assert_eq!(marked(&sent), vec![0, 1, 3]);
    assert_eq!(
        sent["messages"][0]["content"],
        json!([{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(sent["messages"][2]["content"], "");
    assert!(sent.get("prompt_cache_key").is_none());
    // Not for OpenRouter's other models.
    let other = ChatRequest {
        model: "openai/gpt-4.1",
        ..req
    };
    assert!(!body_text(&other, &openrouter).contains("cache_control"));
    // OpenAI: the session's id as prompt_cache_key, the messages untouched; an
    // extra_body key of the same name gives way.
    let mut openai = ProviderConfig::new("openai", "https://api.openai.com/v1");
    openai
        .extra_body
        .insert("prompt_cache_key".into(), json!("mine"));
    let sent = body(&req, &openai);
    assert_eq!(sent["prompt_cache_key"], "20261127-000000-abcdef");
    assert!(marked(&sent).is_empty());
    assert_eq!(
        body_text(&req, &openai).matches("prompt_cache_key").count(),
        1
    );
    // explicit: breakpoints anywhere; off: nothing even on OpenRouter.
    let mut explicit = provider();
    explicit.prompt_cache = PromptCache::Explicit;
    assert_eq!(marked(&body(&req, &explicit)), vec![0, 1, 3]);
    let mut off = openrouter.clone();
    off.prompt_cache = PromptCache::Off;
    assert!(!body_text(&anthropic, &off).contains("cache_control"));
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
            cache_write: None,
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

/// A session that switched providers: reasoning goes back only to the provider that
/// returned it (its base URL); reasoning saved before the source was kept goes where the
/// echo says.
#[test]
fn reasoning_goes_back_only_to_the_provider_it_came_from() {
    let cfg = provider();
    let from = |source: Option<&str>| Message::Assistant {
        content: "".into(),
        reasoning: Some(Reasoning {
            text: "THOUGHT".into(),
            field: ReasoningField::ReasoningContent,
            details: vec![json!({"type": "reasoning.text", "signature": "U0lH"})],
            source: source.map(str::to_string),
        }),
        tool_calls: vec![ToolCall {
            id: "c1".into(),
            name: "bash".into(),
            arguments: "{}".into(),
        }],
    };
    for (source, sent) in [
        (Some(cfg.base_url.as_str()), true),
        (None, true),
        (Some("https://api.deepseek.com/v1"), false),
    ] {
        let messages = vec![
            Message::User {
                images: Vec::new(),
                content: "u".into(),
            },
            from(source),
        ];
        let req = request(&messages, &[]);
        let text = String::from_utf8(RequestBody::new(&req, &cfg, Echo::Send).to_bytes().unwrap())
            .unwrap();
        assert_eq!(text.contains("U0lH"), sent, "{source:?}: {text}");
    }
}

/// A user message with two images, one of them read back and one not.
fn with_images() -> (
    Vec<Message>,
    crate::images::ImageData,
    crate::images::ImageStore,
) {
    let store = crate::images::ImageStore::default();
    let png = b"\x89PNG\r\n\x1a\nabc".to_vec();
    let seen = crate::images::Image::from_bytes(png, "a.png", 100).unwrap();
    let seen = store.put(&seen).unwrap();
    let lost = crate::images::ImageRef {
        sha256: "0".repeat(64),
        name: "gone.png".into(),
        ..seen.clone()
    };
    let messages = vec![Message::User {
        content: "look".into(),
        images: vec![seen.clone(), lost.clone()],
    }];
    let data = store.load([&seen, &lost]);
    (messages, data, store)
}

#[test]
fn images_go_as_image_url_parts_after_the_text_and_a_lost_one_is_named() {
    let (messages, data, _store) = with_images();
    let req = ChatRequest {
        images: &data,
        ..request(&messages, &[])
    };
    let b = body(&req, &provider());
    assert_eq!(
        b["messages"][0]["content"],
        json!([
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgphYmM="}},
            {"type": "text", "text": crate::llm::wire::missing_image_text("gone.png")},
        ])
    );
}
