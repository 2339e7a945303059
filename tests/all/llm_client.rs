//! The model client end to end over loopback HTTP: `Client::complete` against the scripted
//! server, covering streaming, tool calls, reasoning, retries, timeouts, classified errors,
//! the non-streaming fallback, cancellation and the exact request we send.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use crate::support::*;
use harness9::llm::{
    ChatRequest, Client, Completion, FinishReason, LlmError, Message, ProviderConfig, RetryPolicy,
    StreamEvent, StreamMode, ToolCall, ToolSpec, UsageReporting,
};
use harness9::protocol::{ErrorKind, Usage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn provider(server: &MockServer) -> ProviderConfig {
    let mut c = ProviderConfig::new("mock", server.url());
    c.api_key = Some("sk-test-key-123".into());
    c.retry = RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(5),
    };
    c.idle_timeout = Duration::from_secs(10);
    c
}

/// An HTTP error whose body is the usual `{"error": {"message", "code"}}`.
fn api_error(status: u16, message: &str, code: &str) -> Reply {
    http_error(status).json_body(json!({"error": {"message": message, "code": code}}))
}

fn user(text: &str) -> Vec<Message> {
    vec![
        Message::System {
            content: "You are a test.".into(),
        },
        Message::User {
            images: Vec::new(),
            content: text.into(),
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

struct Run {
    result: Result<Completion, LlmError>,
    events: Vec<StreamEvent>,
}

impl Run {
    fn ok(&self) -> &Completion {
        match &self.result {
            Ok(c) => c,
            Err(e) => panic!("expected a completion, got: {e}"),
        }
    }

    fn err(&self) -> &LlmError {
        match &self.result {
            Ok(c) => panic!("expected an error, got: {c:?}"),
            Err(e) => e,
        }
    }

    fn retries(&self) -> Vec<(u32, Duration)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Retrying { attempt, delay, .. } => Some((*attempt, *delay)),
                _ => None,
            })
            .collect()
    }

    /// The attempt number of each retry announced.
    fn retry_attempts(&self) -> Vec<u32> {
        self.retries().iter().map(|r| r.0).collect()
    }

    fn texts(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Text(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }
}

async fn run_with(config: ProviderConfig, messages: &[Message], tools: &[ToolSpec]) -> Run {
    let client = Client::new(config).unwrap();
    let cancel = CancellationToken::new();
    let mut events = Vec::new();
    let result = client
        .complete(
            ChatRequest {
                model: "mock-model",
                messages,
                tools,
                effort: None,
                cache_key: None,
                images: &harness9::images::NO_IMAGES,
                output_schema: None,
            },
            &cancel,
            &mut |e| events.push(e),
        )
        .await;
    Run { result, events }
}

async fn run(config: ProviderConfig) -> Run {
    run_with(config, &user("hi"), &[]).await
}

/// Asserts that `e` is of `kind` and says `says`.
#[track_caller]
fn assert_error(e: &LlmError, kind: ErrorKind, says: &str) {
    assert_eq!(e.kind(), kind, "{e}");
    assert!(e.to_string().contains(says), "{e}");
}

/// The error a completion against `server` ends with.
async fn error_from(server: &MockServer) -> LlmError {
    run(provider(server)).await.result.unwrap_err()
}

/// Runs `config` and asserts that it fails with a timeout, within 1.5 s, saying `needles`.
async fn assert_quick_timeout(config: ProviderConfig, needles: &[&str]) {
    let start = Instant::now();
    let e = run(config).await.result.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(start.elapsed() < Duration::from_millis(1500), "{e}");
    assert_has(&e.to_string(), needles);
}

/// A completion of `user("hi")` against `server`, cancelled at the first event
/// `cancel_at` matches: its result, the events until then, and how long it took.
async fn cancelled_at(
    server: &MockServer,
    cancel_at: impl Fn(&StreamEvent) -> bool + Send + Sync,
) -> (Result<Completion, LlmError>, Vec<StreamEvent>, Duration) {
    let client = Client::new(provider(server)).unwrap();
    let cancel = CancellationToken::new();
    let mut events = Vec::new();
    let start = Instant::now();
    let canceller = cancel.clone();
    let messages = user("hi");
    let result = client
        .complete(
            ChatRequest {
                model: "m",
                messages: &messages,
                tools: &[],
                effort: None,
                cache_key: None,
                images: &harness9::images::NO_IMAGES,
                output_schema: None,
            },
            &cancel,
            &mut |e| {
                if cancel_at(&e) {
                    canceller.cancel();
                }
                events.push(e);
            },
        )
        .await;
    (result, events, start.elapsed())
}

#[tokio::test]
async fn plain_answer_with_usage() {
    let server = MockServer::start(vec![sse(vec![
        text("Hel"),
        text("lo"),
        finish("stop"),
        usage_cached(10, 2, 4),
    ])]);
    let run = run(provider(&server)).await;
    let c = run.ok();
    assert_eq!(c.text, "Hello");
    assert_eq!(c.finish_reason, Some(FinishReason::Stop));
    assert_eq!(
        c.usage,
        Some(Usage {
            input_tokens: 10,
            output_tokens: 2,
            cached_input_tokens: 4,
            cache_write_tokens: 0,
            estimated: false,
            cost: None,
        })
    );
    assert!(c.tool_calls.is_empty() && c.reasoning.is_none());
    assert_eq!(run.texts(), vec!["Hel", "lo"]);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn tool_call_round_trip() {
    let server = MockServer::start(vec![
        tool_reply("call_1", "read_file", r#"{"path":"a.txt"}"#),
        answer("It says hi."),
    ]);
    let tools = [read_file_tool()];
    let mut messages = user("read a.txt");
    let first = run_with(provider(&server), &messages, &tools).await;
    let c = first.ok().clone();
    assert_eq!(c.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        c.tool_calls,
        vec![ToolCall {
            id: "call_1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a.txt"}"#.into()
        }]
    );

    messages.push(Message::Assistant {
        content: c.text.clone().into(),
        reasoning: None,
        tool_calls: c.tool_calls.clone(),
    });
    messages.push(Message::Tool {
        tool_call_id: "call_1".into(),
        content: "hi".into(),
    });
    let second = run_with(provider(&server), &messages, &tools).await;
    assert_eq!(second.ok().text, "It says hi.");

    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    let msgs = sent[1].messages();
    assert_eq!(msgs[2]["role"], "assistant");
    // Never null: llama-cpp-python answers 500 to a null content.
    assert_eq!(msgs[2]["content"], "");
    assert_eq!(msgs[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(msgs[2]["tool_calls"][0]["type"], "function");
    assert_eq!(
        msgs[2]["tool_calls"][0]["function"]["arguments"],
        r#"{"path":"a.txt"}"#
    );
    assert_eq!(
        msgs[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "hi"})
    );
}

#[tokio::test]
async fn parallel_tool_calls_interleaved() {
    let server = MockServer::start(vec![sse(vec![
        tool_call(0, "a", "read_file", "").split_args(1),
        raw(concat!(
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":["#,
            r#"{"index":1,"id":"b","type":"function","function":{"name":"glob","arguments":"{\"pat"}}]}}]}"#,
            "\n\n",
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"x\"}"}}]}}]}"#,
            "\n\n",
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"tern\":\"*.rs\"}"}}]}}]}"#,
            "\n\n",
        )),
        tool_call(2, "c", "list", ""),
        finish("tool_calls"),
    ])]);
    let run = run(provider(&server)).await;
    let calls = &run.ok().tool_calls;
    let summary: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("a", "read_file", r#"{"path":"x"}"#),
            ("b", "glob", r#"{"pattern":"*.rs"}"#),
            ("c", "list", "{}"),
        ]
    );
}

#[tokio::test]
async fn arguments_split_over_many_chunks_and_many_tcp_reads() {
    let args = r#"{"path":"src/main.rs","note":"héllo → wörld"}"#;
    let server = MockServer::start(vec![
        sse(vec![
            tool_call(0, "call_1", "read_file", args).split_args(1),
            finish("tool_calls"),
        ])
        .pieces(3),
        tool_reply("call_2", "read_file", args),
    ]);
    let split = run(provider(&server)).await;
    assert_eq!(split.ok().tool_calls[0].arguments, args);
    let whole = run(provider(&server)).await;
    assert_eq!(whole.ok().tool_calls[0].arguments, args);
    assert_eq!(whole.ok().tool_calls[0].id, "call_2");
}

#[tokio::test]
async fn tool_calls_without_index_or_id() {
    let server = MockServer::start(vec![sse(vec![
        tool_call_no_index("x1", "read_file", r#"{"path":"a"}"#).split_args(4),
        tool_call_no_index("x2", "read_file", r#"{"path":"b"}"#),
        tool_call(2, "", "list", "").no_id(),
        finish("tool_calls"),
    ])]);
    let run = run(provider(&server)).await;
    let calls = &run.ok().tool_calls;
    assert_eq!(calls.len(), 3);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].arguments.as_str()),
        ("x1", r#"{"path":"a"}"#)
    );
    assert_eq!(
        (calls[1].id.as_str(), calls[1].arguments.as_str()),
        ("x2", r#"{"path":"b"}"#)
    );
    assert_eq!(
        (calls[2].id.as_str(), calls[2].arguments.as_str()),
        ("call_2", "{}")
    );
}

#[tokio::test]
async fn reasoning_deltas_stream_and_are_kept() {
    let server = MockServer::start(vec![sse(vec![
        reasoning("Let me "),
        reasoning_field("think."),
        text("Answer."),
        finish("stop"),
    ])]);
    let run = run(provider(&server)).await;
    assert_eq!(
        run.ok().reasoning.as_ref().map(|r| r.text.as_str()),
        Some("Let me think.")
    );
    // Marked with the provider it came from, so it only goes back there.
    assert_eq!(
        run.ok()
            .reasoning
            .as_ref()
            .and_then(|r| r.source.as_deref()),
        Some(server.url().trim_end_matches('/'))
    );
    assert_eq!(run.ok().text, "Answer.");
    assert_eq!(
        run.events,
        vec![
            StreamEvent::Reasoning("Let me ".into()),
            StreamEvent::Reasoning("think.".into()),
            StreamEvent::Text("Answer.".into()),
        ]
    );
}

#[tokio::test]
async fn rate_limit_then_success_honours_retry_after() {
    let server = MockServer::start(vec![
        http_error(429).header("Retry-After", "1"),
        answer("ok"),
    ]);
    let start = Instant::now();
    let run = run(provider(&server)).await;
    assert_eq!(run.ok().text, "ok");
    assert!(start.elapsed() >= Duration::from_secs(1));
    assert_eq!(run.retries(), vec![(2, Duration::from_secs(1))]);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn retry_after_beyond_the_cap_is_not_waited_for() {
    let server = MockServer::start(vec![http_error(429).header("Retry-After", "600")]);
    let run = run(provider(&server)).await;
    assert_eq!(run.err().kind(), ErrorKind::RateLimit);
    assert_eq!(run.err().retry_after(), Some(Duration::from_secs(600)));
    assert!(run.retries().is_empty());
    assert_eq!(server.requests().len(), 1);
    let shown = run.err().to_string();
    assert!(shown.contains("asks to wait 10 min"), "{shown}");
    assert!(
        shown.contains("longer than the 5 s harness9 waits"),
        "{shown}"
    );
}

#[tokio::test]
async fn a_day_long_retry_after_is_named_in_the_error_not_a_minute() {
    let server =
        MockServer::start(vec![http_error(429).header("Retry-After", "86400").body(
            r#"{"error":{"message":"Rate limit reached for requests per day"}}"#,
        )]);
    let mut config = provider(&server);
    config.retry = RetryPolicy::default();
    let start = Instant::now();
    let run = run(config).await;
    assert!(start.elapsed() < Duration::from_secs(30), "not waited for");
    let e = run.err();
    assert_eq!(e.kind(), ErrorKind::RateLimit);
    assert_eq!(e.attempts(), 1);
    assert!(run.retries().is_empty());
    let shown = e.to_string();
    assert!(
        shown.contains("The provider asks to wait 24 h before the next request"),
        "{shown}"
    );
    assert!(
        shown.contains("longer than the 60 s harness9 waits by itself"),
        "{shown}"
    );
    assert!(
        shown.contains("Rate limit reached for requests per day"),
        "{shown}"
    );
    assert!(!shown.contains("Wait a minute"), "{shown}");
}

#[tokio::test]
async fn a_retry_after_date_in_the_past_backs_off_like_no_header() {
    let past = "Sun, 06 Nov 1994 08:49:37 GMT";
    let server = MockServer::start(vec![
        http_error(429).header("Retry-After", past),
        http_error(503).header("Retry-After", past),
        http_error(429).header("Retry-After", "0"),
        answer("ok"),
    ]);
    let run = run(provider(&server)).await;
    assert_eq!(run.ok().text, "ok");
    let retries = run.retries();
    assert_eq!(
        retries.iter().map(|r| r.0).collect::<Vec<_>>(),
        [2, 3, 4],
        "{retries:?}"
    );
    // The policy's backoff: 5 ms doubled each time, jittered into its upper half, so
    // never 0 ms.
    for (i, (_, delay)) in retries.iter().enumerate() {
        let floor = Duration::from_micros(2500) * 2u32.pow(i as u32);
        assert!(
            *delay >= floor.min(Duration::from_millis(10)),
            "{retries:?}"
        );
        assert!(*delay <= Duration::from_millis(20), "{retries:?}");
    }
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn server_errors_until_retries_run_out() {
    let server = MockServer::start(vec![
        http_error(500),
        http_error(502),
        http_error(500).body("upstream exploded"),
    ]);
    let mut config = provider(&server);
    config.retry.max_retries = 2;
    let run = run(config).await;
    let e = run.err();
    assert_eq!(e.kind(), ErrorKind::Server);
    assert_eq!(e.status(), Some(500));
    assert_eq!(e.attempts(), 3);
    assert_eq!(e.provider_message(), "upstream exploded");
    let shown = e.to_string();
    assert!(
        shown.contains(&format!("{}/chat/completions", server.url())),
        "{shown}"
    );
    assert_has(&shown, &["HTTP 500", "after 3 attempts"]);
    assert_eq!(run.retry_attempts(), vec![2, 3]);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn auth_failure_is_not_retried_and_never_shows_the_key() {
    let server = MockServer::start(vec![api_error(
        401,
        "Incorrect API key provided: sk-test-key-123",
        "invalid_api_key",
    )]);
    let run = run(provider(&server)).await;
    let e = run.err();
    assert_eq!(e.kind(), ErrorKind::Auth);
    assert_eq!(e.status(), Some(401));
    let shown = e.to_string();
    assert!(shown.contains("OPENAI_API_KEY"), "{shown}");
    assert!(!shown.contains("sk-test-key-123"), "{shown}");
    assert!(run.retries().is_empty());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn exhausted_quota_is_not_retried() {
    let server = MockServer::start(vec![http_error(429).json_body(json!({"error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota", "code": "insufficient_quota"}}))]);
    let run = run(provider(&server)).await;
    assert_eq!(run.err().kind(), ErrorKind::Quota);
    assert!(run.retries().is_empty());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn unknown_model_and_context_too_long() {
    let server = MockServer::start(vec![
        api_error(
            404,
            "The model `mock-model` does not exist",
            "model_not_found",
        ),
        api_error(
            400,
            "This model's maximum context length is 8192 tokens.",
            "context_length_exceeded",
        ),
    ]);
    let e = error_from(&server).await;
    assert_error(&e, ErrorKind::ModelNotFound, "--model or HARNESS9_MODEL");
    let e = error_from(&server).await;
    assert_eq!(e.kind(), ErrorKind::ContextTooLong);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_validation_error_with_a_500_is_retried_once_then_reported_as_a_bad_request() {
    let pydantic = json!({"detail": [{"type": "string_type", "loc": ["body", "messages", 2, "content"],
        "msg": "Input should be a valid string", "input": null}]});
    let server = MockServer::start(vec![
        http_error(500).json_body(pydantic.clone()),
        http_error(500).json_body(pydantic),
        answer("never asked for"),
    ]);
    let run = run(provider(&server)).await;
    let e = run.err();
    assert_eq!(e.kind(), ErrorKind::BadRequest);
    assert_eq!((e.status(), e.attempts()), (Some(500), 2));
    let s = e.to_string();
    assert!(s.contains("Input should be a valid string"), "{s}");
    assert!(!s.contains("having trouble"), "{s}");
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn a_cut_stream_is_retried() {
    let server = MockServer::start(vec![
        sse(vec![text("par"), text("tial"), finish("stop")]).cut_after(1),
        sse(vec![text("par")]).without_done().close_delimited(),
        answer("full"),
    ]);
    let run = run(provider(&server)).await;
    assert_eq!(run.ok().text, "full");
    assert_eq!(run.retry_attempts(), vec![2, 3]);
    assert_eq!(run.texts(), vec!["par", "par", "full"]);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_stream_that_ends_inside_an_event_is_a_cut_whether_closed_or_reset() {
    let half_event = r#"data: {"choices":[{"index":0,"delta":{"content":"par"#;
    let server = MockServer::start(vec![
        // A clean end of the body in the middle of a data line...
        sse(vec![text("a"), raw(half_event)]).without_done(),
        // ...and the same bytes followed by a reset.
        sse(vec![text("a"), raw(half_event), text("never sent")]).cut_after(2),
        answer("full"),
    ]);
    let run = run(provider(&server)).await;
    assert_eq!(run.ok().text, "full");
    assert_eq!(run.retry_attempts(), vec![2, 3]);
    assert_eq!(server.chat_requests().len(), 3);

    // Out of retries, it is reported as a cut, not as a protocol error.
    let server = MockServer::start(vec![sse(vec![raw(half_event)]).without_done()]);
    let mut config = provider(&server);
    config.retry.max_retries = 0;
    let e = run_with(config, &user("hi"), &[]).await.result.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Network);
    assert!(
        e.to_string().contains("the connection broke mid-answer"),
        "{e}"
    );
}

#[tokio::test]
async fn a_stream_without_any_data_is_asked_again_without_streaming() {
    let overflow = json!({"error": {"message": "Requested tokens (2285) exceed context window of 2048",
        "type": "invalid_request_error", "code": "context_length_exceeded"}});
    let server = MockServer::start(vec![
        // llama-cpp-python on an overflow: 200, an event stream, nothing in it.
        sse(vec![]).without_done(),
        http_error(400).json_body(overflow),
        // Only keep-alive comments, then the end: the same, and the retry answers.
        sse(vec![
            comment("ping - 2025-01-01 00:00:00"),
            comment("OPENROUTER PROCESSING"),
        ])
        .without_done(),
        json_text("fine"),
    ]);
    let first = run(provider(&server)).await;
    let e = first.err();
    assert_eq!(e.kind(), ErrorKind::ContextTooLong);
    assert_eq!(e.attempts(), 2);
    assert!(first.retries().is_empty());

    let second = run(provider(&server)).await;
    assert_eq!(second.ok().text, "fine");

    let sent = server.chat_requests();
    assert_eq!(sent.len(), 4);
    for (i, stream) in [(0, true), (1, false), (2, true), (3, false)] {
        assert_eq!(sent[i].body["stream"], stream, "request {i}");
    }
    assert!(sent[1].body.get("stream_options").is_none());
    assert_eq!(sent[1].header("accept"), Some("application/json"));
    assert_eq!(sent[0].messages(), sent[1].messages());
}

#[tokio::test]
async fn comments_before_the_data_are_an_event_stream() {
    let server = MockServer::start(vec![sse(vec![
        comment("OPENROUTER PROCESSING"),
        comment("ping - 2025-01-01 00:00:00"),
        text("hi"),
        finish("stop"),
    ])]);
    assert_eq!(run(provider(&server)).await.ok().text, "hi");
}

#[tokio::test]
async fn keep_alives_hold_the_idle_timer_only_until_the_first_data() {
    let keepalives = |n| (0..n).map(|_| comment("keepalive")).collect::<Vec<_>>();
    // Comments every 50 ms for 1 s before the first data: the server is still working.
    let mut slow_start = keepalives(20);
    slow_start.extend([text("b"), finish("stop")]);
    // Comments every 50 ms for 2 s after the answer started: nothing is moving.
    let mut stuck = vec![text("a")];
    stuck.extend(keepalives(40));
    stuck.push(finish("stop"));
    let server = MockServer::start(vec![sse(slow_start).delay_ms(50), sse(stuck).delay_ms(50)]);
    let mut config = provider(&server);
    config.idle_timeout = Duration::from_millis(300);
    config.retry.max_retries = 0;

    assert_eq!(run(config.clone()).await.ok().text, "b");

    assert_quick_timeout(config, &["idle timeout", "idle_timeout_secs"]).await;
}

#[tokio::test]
async fn an_attempt_that_streams_too_long_hits_the_attempt_timeout() {
    let deltas = (0..40).map(|_| text("x")).collect::<Vec<_>>();
    let server = MockServer::start(vec![sse(deltas).delay_ms(50)]);
    let mut config = provider(&server);
    config.idle_timeout = Duration::from_millis(300);
    config.attempt_timeout = Duration::from_millis(400);
    config.retry.max_retries = 0;
    assert_quick_timeout(config, &["attempt timeout", "attempt_timeout_secs"]).await;
}

#[tokio::test]
async fn retries_stop_at_the_total_timeout() {
    let stalls = (0..6)
        .map(|_| sse(vec![]).delay_headers_ms(5_000))
        .collect();
    let server = MockServer::start(stalls);
    let mut config = provider(&server);
    config.idle_timeout = Duration::from_millis(200);
    config.retry.max_retries = 5;
    config.total_timeout = Duration::from_millis(500);
    let start = Instant::now();
    let run = run(config).await;
    let e = run.err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(start.elapsed() < Duration::from_millis(1000), "{e}");
    assert!(e.attempts() <= 3, "{e}");
    assert!(e.to_string().contains("total_timeout_secs"), "{e}");

    // A retry wait that would pass the total is not started either.
    let server = MockServer::start(vec![http_error(503).header("Retry-After", "2")]);
    let mut config = provider(&server);
    config.total_timeout = Duration::from_secs(1);
    let start = Instant::now();
    let run = run_with(config, &user("hi"), &[]).await;
    let e = run.err();
    assert_eq!((e.kind(), e.attempts()), (ErrorKind::Server, 1));
    assert!(start.elapsed() < Duration::from_secs(1));
    assert!(e.to_string().contains("total_timeout_secs"), "{e}");
    assert_eq!(server.chat_requests().len(), 1);
}

#[tokio::test]
async fn eof_without_done_after_a_finish_is_a_complete_answer() {
    let server = MockServer::start(vec![sse(vec![text("x"), finish("length")]).without_done()]);
    let run = run(provider(&server)).await;
    assert_eq!(run.ok().finish_reason, Some(FinishReason::Length));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_break_after_the_finish_keeps_the_answer() {
    let server = MockServer::start(vec![
        sse(vec![text("x"), finish("stop"), usage(1, 1)]).cut_after(2),
        sse(vec![text("y"), finish("stop"), usage(1, 1)]).stall_after(2),
    ]);
    let mut config = provider(&server);
    config.idle_timeout = Duration::from_millis(300);
    let cut = run(config.clone()).await;
    assert_eq!((cut.ok().text.as_str(), cut.ok().usage), ("x", None));
    let stalled = run(config).await;
    assert_eq!(stalled.ok().text, "y");
    assert!(cut.retries().is_empty() && stalled.retries().is_empty());
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_stall_hits_the_idle_timeout() {
    let server = MockServer::start(vec![
        answer("a").stall_after(1),
        sse(vec![text("b")]).delay_headers_ms(5_000),
    ]);
    let mut config = provider(&server);
    config.idle_timeout = Duration::from_millis(300);
    config.retry.max_retries = 1;
    let start = Instant::now();
    let run = run(config).await;
    let e = run.err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert_eq!(e.attempts(), 2);
    assert!(start.elapsed() >= Duration::from_millis(600));
    assert!(start.elapsed() < Duration::from_secs(4));
    assert!(e.to_string().contains("300 ms"), "{e}");
}

#[tokio::test]
async fn error_objects_inside_the_stream_are_classified() {
    let server = MockServer::start(vec![
        sse(vec![
            text("a"),
            error_object(
                json!({"message": "prompt too big: maximum context length exceeded",
                "code": "context_length_exceeded"}),
            ),
        ]),
        sse(vec![text("a"), stream_error("Overloaded")]),
        answer("ok"),
    ]);
    let e = error_from(&server).await;
    assert_eq!(e.kind(), ErrorKind::ContextTooLong);
    assert!(e.provider_message().contains("maximum context length"));
    // A provider failure mid-stream is retried.
    let run = run(provider(&server)).await;
    assert_eq!(run.ok().text, "ok");
    assert_eq!(run.retries().len(), 1);
}

#[tokio::test]
async fn a_json_body_is_read_as_a_non_streaming_answer() {
    let server = MockServer::start(vec![
        json_text("plain json"),
        json_tool_calls(&[("t1", "read_file", r#"{"path":"a"}"#)]),
    ]);
    let run1 = run(provider(&server)).await;
    assert_eq!(run1.ok().text, "plain json");
    assert_eq!(run1.ok().usage.map(|u| u.input_tokens), Some(5));
    assert_eq!(run1.texts(), vec!["plain json"]);

    let mut config = provider(&server);
    config.stream_mode = StreamMode::NonStreaming;
    let run2 = run(config).await;
    assert_eq!(run2.ok().tool_calls[0].id, "t1");
    let sent = &server.requests()[1];
    assert_eq!(sent.body["stream"], false);
    assert!(sent.body.get("stream_options").is_none());
    assert_eq!(sent.header("accept"), Some("application/json"));
}

#[tokio::test]
async fn garbage_is_a_protocol_error() {
    let server = MockServer::start(vec![Reply::raw(
        200,
        "text/html",
        "<html>not an API</html>",
    )]);
    let e = error_from(&server).await;
    assert_error(&e, ErrorKind::Protocol, "/v1");
}

#[tokio::test]
async fn nobody_listening_is_a_network_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut config = ProviderConfig::new("local", format!("http://127.0.0.1:{port}/v1/"));
    config.retry.max_retries = 1;
    config.retry.base_delay = Duration::from_millis(1);
    let run = run(config).await;
    let e = run.err();
    assert_eq!(e.kind(), ErrorKind::Network);
    assert_eq!(e.attempts(), 2);
    assert!(
        e.to_string().contains(&format!(
            "Is the server running at http://127.0.0.1:{port}/v1?"
        )),
        "{e}"
    );
}

#[tokio::test]
async fn cancellation_aborts_a_stalled_stream_promptly() {
    let server = MockServer::start(vec![answer("a").stall_after(1)]);
    let (result, events, took) = cancelled_at(&server, |_| true).await;
    assert_eq!(result.unwrap_err().kind(), ErrorKind::Interrupted);
    assert_eq!(events, vec![StreamEvent::Text("a".into())]);
    assert!(took < Duration::from_secs(5));
}

#[tokio::test]
async fn cancellation_interrupts_a_retry_wait() {
    let server = MockServer::start(vec![http_error(503).header("Retry-After", "4")]);
    let (result, _, took) =
        cancelled_at(&server, |e| matches!(e, StreamEvent::Retrying { .. })).await;
    assert_eq!(result.unwrap_err().kind(), ErrorKind::Interrupted);
    assert!(took < Duration::from_secs(4));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn the_request_we_send() {
    let server = MockServer::start(vec![]);
    let mut config = provider(&server);
    config.base_url = format!("{}/", server.url());
    config.extra_headers = vec![("X-Title".into(), "harness9-test".into())];
    let run1 = run_with(config.clone(), &user("hi"), &[read_file_tool()]).await;
    assert_eq!(run1.ok().text, "done");

    config.usage_reporting = UsageReporting::Omit;
    config.api_key = None;
    run_with(config, &user("hi"), &[]).await.ok();

    let sent = server.wait_for_requests(2, Duration::from_secs(5));
    let first = &sent[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(
        first.header("authorization"),
        Some("Bearer sk-test-key-123")
    );
    assert_eq!(first.header("x-title"), Some("harness9-test"));
    assert_eq!(first.header("accept"), Some("text/event-stream"));
    assert_eq!(first.header("content-type"), Some("application/json"));
    assert_eq!(first.body["model"], "mock-model");
    assert_eq!(first.body["stream"], true);
    assert_eq!(first.body["stream_options"], json!({"include_usage": true}));
    // With tools, tool_choice "auto": llama-cpp-python reads a missing one as "none".
    assert_eq!(first.body["tool_choice"], "auto");
    assert_eq!(
        first.body["tools"],
        json!([{"type": "function", "function": {
            "name": "read_file", "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}])
    );
    assert_eq!(
        first.messages()[0],
        json!({"role": "system", "content": "You are a test."})
    );

    let second = &sent[1];
    assert!(second.body.get("stream_options").is_none());
    assert!(second.body.get("tools").is_none());
    assert!(second.body.get("tool_choice").is_none());
    assert_eq!(second.header("authorization"), None);
}

#[test]
fn the_server_works_from_plain_tests_and_answers_done_when_the_script_runs_out() {
    let server = MockServer::start(vec![]);
    server.push(answer("pushed"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let first = rt.block_on(run(provider(&server)));
    assert_eq!(first.ok().text, "pushed");
    let second = rt.block_on(run(provider(&server)));
    assert_eq!(second.ok().text, "done");
    assert_eq!(server.remaining(), 0);
    assert_eq!(server.wait_for_requests(2, Duration::from_secs(5)).len(), 2);
}
