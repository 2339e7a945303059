//! The Responses wire end to end: the client against the scripted server speaking
//! `/v1/responses` (streaming and not, retries, cut streams, idle timeouts, classified
//! errors), and the real binary configured with `wire = "responses"` completing a turn
//! of three tool calls while echoing each encrypted reasoning item byte for byte.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::support::*;
use harness9::llm::{
    ChatRequest, Client, Completion, FinishReason, LlmError, Message, ProviderConfig, RetryPolicy,
    StreamEvent, StreamMode, ToolSpec, Wire, WireSetting,
};
use harness9::protocol::ErrorKind;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn provider(server: &MockServer) -> ProviderConfig {
    let mut c = ProviderConfig::new("mock", server.url());
    c.api_key = Some("sk-test-key-123".into());
    c.wire = WireSetting::Always {
        wire: Wire::Responses,
    };
    c.retry = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(5),
    };
    c.idle_timeout = Duration::from_secs(10);
    c
}

fn conversation() -> Vec<Message> {
    vec![
        Message::System {
            content: "You are a test.".into(),
        },
        Message::User {
            images: Vec::new(),
            content: "hi".into(),
        },
    ]
}

fn read_file_tool() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: "Read a file.".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

async fn complete(config: ProviderConfig) -> (Result<Completion, LlmError>, Vec<StreamEvent>) {
    let client = Client::new(config).unwrap();
    let messages = conversation();
    let tools = [read_file_tool()];
    let mut events = Vec::new();
    let result = client
        .complete(
            ChatRequest {
                model: "mock-model",
                messages: &messages,
                tools: &tools,
                effort: None,
                cache_key: None,
                images: &harness9::images::NO_IMAGES,
                output_schema: None,
            },
            &CancellationToken::new(),
            &mut |e| events.push(e),
        )
        .await;
    (result, events)
}

fn retries(events: &[StreamEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Retrying { .. }))
        .count()
}

#[tokio::test]
async fn a_streamed_answer_goes_to_the_responses_endpoint() {
    let server = MockServer::start(vec![rs_sse(
        vec![
            rs_reasoning("rs_1", "Let me look.", "enc-1"),
            rs_text("Reading."),
            rs_call("call_1", "read_file", r#"{"path":"a.txt"}"#),
        ],
        (50, 10, 40),
    )]);
    let (result, events) = complete(provider(&server)).await;
    let done = result.unwrap();
    assert_eq!(done.text, "Reading.");
    assert_eq!(done.tool_calls[0].id, "call_1");
    assert_eq!(done.tool_calls[0].arguments, r#"{"path":"a.txt"}"#);
    assert_eq!(done.finish_reason, Some(FinishReason::ToolCalls));
    let usage = done.usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cached_input_tokens
        ),
        (50, 10, 40)
    );
    let reasoning = done.reasoning.unwrap();
    assert_eq!(reasoning.text, "Let me look.");
    assert_eq!(reasoning.details[0]["encrypted_content"], "enc-1");
    assert!(events.contains(&StreamEvent::Reasoning("Let me look.".into())));

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test-key-123"));
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
    assert_eq!(sent.body["instructions"], "You are a test.");
    assert_eq!(
        sent.body["input"],
        json!([{"type": "message", "role": "user", "content": "hi"}])
    );
    assert_eq!(sent.body["tools"][0]["name"], "read_file");
    assert_eq!(sent.body["store"], false);
    assert_eq!(sent.body["stream"], true);
    assert!(server.chat_requests().is_empty());
}

#[tokio::test]
async fn a_non_streaming_body_is_read_too() {
    let server = MockServer::start(vec![json_reply(json!({
        "id": "resp_1", "object": "response", "status": "completed", "error": null,
        "output": [{"id": "m", "type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "Plain."}]}],
        "usage": {"input_tokens": 7, "output_tokens": 1}}))]);
    let mut config = provider(&server);
    config.stream_mode = StreamMode::NonStreaming;
    let (result, events) = complete(config).await;
    let done = result.unwrap();
    assert_eq!(done.text, "Plain.");
    assert_eq!(done.finish_reason, Some(FinishReason::Stop));
    assert_eq!(events, vec![StreamEvent::Text("Plain.".into())]);
    assert_eq!(server.requests()[0].body["stream"], false);
}

/// Retries follow the error's kind, as on the Chat wire: a rate limit, a cut stream and
/// a failed response with a server error are tried again; the answer then arrives.
#[tokio::test]
async fn transient_failures_are_retried() {
    let failed = sse(vec![raw(
        "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The server had an error\"}}}\n\n",
    )])
    .without_done();
    let server = MockServer::start(vec![
        http_error(429).header("Retry-After", "0"),
        rs_answer("never whole").cut_after(4),
        failed,
    ]);
    server.push(rs_answer("fine"));
    let mut config = provider(&server);
    config.retry.max_retries = 3;
    let (result, events) = complete(config).await;
    assert_eq!(result.unwrap().text, "fine");
    assert_eq!(retries(&events), 3);
    assert_eq!(server.responses_requests().len(), 4);
}

/// Errors that another attempt does not fix are not retried, and keep their kind.
#[tokio::test]
async fn lasting_failures_are_classified_and_not_retried() {
    let overflow = http_error(400).json_body(json!({"error": {
        "message": "Your input exceeds the context window of this model.",
        "type": "invalid_request_error", "code": "context_length_exceeded"}}));
    let cases: Vec<(Reply, ErrorKind)> = vec![
        (overflow, ErrorKind::ContextTooLong),
        (http_error(401), ErrorKind::Auth),
        (
            sse(vec![raw(
                "event: error\ndata: {\"type\":\"error\",\"code\":\"context_length_exceeded\",\"message\":\"too long\"}\n\n",
            )])
            .without_done(),
            ErrorKind::ContextTooLong,
        ),
    ];
    for (reply, kind) in cases {
        let server = MockServer::start(vec![reply]);
        let (result, events) = complete(provider(&server)).await;
        let e = result.unwrap_err();
        assert_eq!(e.kind(), kind, "{e}");
        assert_eq!(retries(&events), 0, "{e}");
        assert!(e.to_string().contains("/v1/responses"), "{e}");
    }
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let server = MockServer::start(vec![rs_answer("slow").stall_after(2)]);
    let mut config = provider(&server);
    config.idle_timeout = Duration::from_millis(300);
    config.retry.max_retries = 0;
    let (result, _) = complete(config).await;
    assert_eq!(result.unwrap_err().kind(), ErrorKind::Timeout);
}

/// `auto` keeps a loopback server (whatever the model's name) on the Chat wire.
#[tokio::test]
async fn auto_keeps_other_hosts_on_the_chat_wire() {
    let server = MockServer::start(vec![answer("chat")]);
    let mut config = provider(&server);
    config.wire = WireSetting::Auto;
    let client = Client::new(config).unwrap();
    assert_eq!(client.wire_for("gpt-5-codex"), Wire::Chat);
    assert!(
        client
            .endpoint_for("o3-pro")
            .ends_with("/v1/chat/completions")
    );
}

// ---------------------------------------------------------------------------------------
// The binary
// ---------------------------------------------------------------------------------------

/// A `-p` run with `wire = "responses"`: three calls, each after an encrypted reasoning
/// item, then the answer. Every later request carries every earlier item with the exact
/// bytes the server sent, before the call it came with; the calls' results go back as
/// `function_call_output`s.
#[test]
fn a_three_call_turn_echoes_encrypted_reasoning_byte_for_byte() {
    let dirs = Dirs::with_config("max_retries = 1\nwire = \"responses\"\n");
    for (name, text) in [("a.txt", "alpha"), ("b.txt", "beta"), ("c.txt", "gamma")] {
        dirs.project_file(name, text);
    }
    let secrets: Vec<String> = (1..=3)
        .map(|n| format!("gAAAAABo{n}-opaque+/=={}", "x".repeat(300 * n)))
        .collect();
    let server = MockServer::start(vec![]);
    for (n, file) in ["a.txt", "b.txt", "c.txt"].iter().enumerate() {
        let args = json!({ "path": file }).to_string();
        server.push(rs_call_reply(
            &format!("call_{}", n + 1),
            "read_file",
            &args,
            &secrets[n],
        ));
    }
    server.push(rs_answer("All three read."));

    let out = server.run(&dirs, &["-p", "read the three files"]);
    assert_exit(&out, 0);
    assert_has(&stdout_text(&out), &["All three read."]);

    let requests = server.responses_requests();
    assert_eq!(requests.len(), 4);
    assert!(server.chat_requests().is_empty());
    let first = &requests[0].body;
    assert!(
        first["instructions"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    assert_eq!(first["store"], false);
    assert_eq!(first["include"], json!(["reasoning.encrypted_content"]));
    assert!(
        first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["type"] == "function" && t["name"].is_string() && t["strict"] == false)
    );

    for (k, request) in requests.iter().enumerate() {
        let body = &request.raw_body;
        for (n, secret) in secrets.iter().enumerate() {
            let call_id = format!("call_{}", n + 1);
            let item = rs_reasoning(
                &format!("rs_{call_id}"),
                &format!("thinking about {call_id}"),
                secret,
            )
            .item
            .to_string();
            if n < k {
                assert_eq!(
                    body.matches(&item).count(),
                    1,
                    "request {k}, item {n}: {body}"
                );
                let call_at = body
                    .find(&format!(
                        "\"type\":\"function_call\",\"call_id\":\"{call_id}\""
                    ))
                    .unwrap();
                assert!(
                    body.find(&item).unwrap() < call_at,
                    "request {k}: the item comes before its call"
                );
            } else {
                assert!(
                    !body.contains(secret.as_str()),
                    "request {k} holds a later item"
                );
            }
        }
        let outputs: Vec<&Value> = request.body["input"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .collect();
        assert_eq!(outputs.len(), k);
        for (n, text) in ["alpha", "beta", "gamma"].iter().take(k).enumerate() {
            assert_eq!(outputs[n]["call_id"], format!("call_{}", n + 1));
            assert!(outputs[n]["output"].as_str().unwrap().contains(text));
        }
    }
}

/// The REPL fed through a pipe over the Responses wire: each line is a turn, and the
/// second request holds the first exchange as input items (the answer as an assistant
/// message), the system prompt still only in `instructions`.
#[test]
fn a_piped_repl_keeps_the_conversation_as_input_items() {
    let dirs = Dirs::with_config("max_retries = 1\nwire = \"responses\"\n");
    let server = MockServer::start(vec![
        rs_answer("First answer."),
        rs_answer("Second answer."),
    ]);
    let out = run_fed(&mut server.binary(&dirs), b"first line\nsecond line\n");
    assert_exit(&out, 0);
    assert_has(&stdout_text(&out), &["First answer.", "Second answer."]);
    let requests = server.responses_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].body["instructions"],
        requests[1].body["instructions"]
    );
    assert_eq!(
        requests[1].body["input"],
        json!([
            {"type": "message", "role": "user", "content": "first line"},
            {"type": "message", "role": "assistant", "content": "First answer."},
            {"type": "message", "role": "user", "content": "second line"},
        ])
    );
}
