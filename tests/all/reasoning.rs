//! Reasoning round-tripped with the default configuration, through the real binary: a
//! DeepSeek-like server that refuses an assistant tool-call message without its
//! `reasoning_content`, and an OpenRouter-like one returning `reasoning_details` with
//! signatures (streamed in pieces, and whole in a JSON body). Each completes a turn of
//! three tool calls, and what goes back is what was received.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::*;
use serde_json::{Value, json};

/// DeepSeek's documented refusal of a thinking-mode request whose assistant tool-call
/// message lacks its reasoning.
const DEEPSEEK_REFUSAL: &str =
    "The `reasoning_content` in the thinking mode must be passed back to the API.";

/// The reasoning of step `n`, streamed in `reasoning_content`.
fn thought(n: usize) -> String {
    format!("Step {n}: I should look \"closely\" \u{e9}\\n at file {n}.")
}

/// A reply that thinks `thought(n)` in three pieces, then runs `echo step-n`.
fn thinking_call(n: usize) -> Reply {
    let text = thought(n);
    let mut items: Vec<Ev> = split_chars(&text, 3).iter().map(|p| reasoning(p)).collect();
    items.push(tool_call(
        0,
        &format!("call_{n}"),
        "bash",
        &json!({"command": format!("echo step-{n}")}).to_string(),
    ));
    items.push(finish("tool_calls"));
    sse(items)
}

/// A server that answers 400 like DeepSeek when an assistant tool-call message comes
/// without `reasoning_content`, else follows its queue.
fn deepseek_like(replies: Vec<Reply>) -> MockServer {
    let server = MockServer::start(replies);
    server.respond_with(|req| {
        let missing = req.messages().iter().any(|m| {
            m["role"] == "assistant"
                && m["tool_calls"].as_array().is_some_and(|c| !c.is_empty())
                && !m["reasoning_content"].is_string()
        });
        missing.then(|| {
            json_reply(json!({"error": {"message": DEEPSEEK_REFUSAL,
                "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}}))
            .status(400)
        })
    });
    server
}

fn three_calls_then_answer() -> Vec<Reply> {
    vec![
        thinking_call(1),
        thinking_call(2),
        thinking_call(3),
        answer("all three done"),
    ]
}

/// The `reasoning_content` of every assistant message of a request, in order.
fn echoed_contents(req: &RecordedRequest) -> Vec<Option<String>> {
    req.messages()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["reasoning_content"].as_str().map(str::to_string))
        .collect()
}

fn run_p(server: &MockServer, dirs: &Dirs, model: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = server.binary(dirs);
    cmd.env("HARNESS9_MODEL", model)
        .args(["--approval-mode", "full-auto"])
        .args(args);
    output_of(&mut cmd)
}

#[test]
fn deepseek_like_refusal_is_answered_with_the_reasoning_and_remembered_for_the_next_session() {
    let server = deepseek_like(three_calls_then_answer());
    let dirs = Dirs::new();
    let out = run_p(
        &server,
        &dirs,
        "thinker",
        &["--verbose", "-p", "do three steps"],
    );
    assert_exit(&out, 0);
    assert_eq!(stdout_text(&out).trim(), "all three done");
    // The user is told why the request was asked again (retries show with --verbose).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("wants the model's reasoning sent back; asking again with it"),
        "{stderr}"
    );

    // Request 2 went without the reasoning, was refused, and was asked again with it;
    // every later request carried each step's reasoning exactly as it streamed.
    let requests = server.chat_requests();
    assert_eq!(
        requests.len(),
        5,
        "{:#?}",
        requests.iter().map(|r| r.messages()).collect::<Vec<_>>()
    );
    assert_eq!(echoed_contents(&requests[1]), vec![None]);
    assert_eq!(echoed_contents(&requests[2]), vec![Some(thought(1))]);
    assert_eq!(
        echoed_contents(&requests[4]),
        vec![Some(thought(1)), Some(thought(2)), Some(thought(3))]
    );
    // Byte for byte: the JSON text of what went back is the JSON text of what came.
    let sent = serde_json::to_string(&thought(3)).unwrap();
    assert!(
        requests[4]
            .raw_body
            .contains(&format!("\"reasoning_content\":{sent}"))
    );

    let memory = std::fs::read_to_string(dirs.home().join("cache/reasoning_echo.json")).unwrap();
    let memory: Value = serde_json::from_str(&memory).unwrap();
    let key = format!("{} thinker", server.url());
    assert_eq!(memory[&key]["echo"], "required", "{memory}");

    // The next session starts right: no refusal at all.
    for reply in three_calls_then_answer() {
        server.push(reply);
    }
    let out = run_p(&server, &dirs, "thinker", &["-p", "again"]);
    assert_exit(&out, 0);
    let later = server.chat_requests().split_off(5);
    assert_eq!(later.len(), 4);
    assert_eq!(echoed_contents(&later[1]), vec![Some(thought(1))]);
}

#[test]
fn a_known_deepseek_thinking_model_gets_its_reasoning_back_from_the_first_request() {
    let server = deepseek_like(three_calls_then_answer());
    let dirs = Dirs::new();
    let out = run_p(
        &server,
        &dirs,
        "deepseek-reasoner",
        &["-p", "do three steps"],
    );
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        echoed_contents(&requests[3]),
        vec![Some(thought(1)), Some(thought(2)), Some(thought(3))]
    );
}

#[test]
fn send_reasoning_false_overrides_and_a_refusal_then_fails_the_turn() {
    let server = deepseek_like(three_calls_then_answer());
    let dirs = Dirs::with_config("send_reasoning = false\nmax_retries = 0\n");
    let out = run_p(
        &server,
        &dirs,
        "deepseek-reasoner",
        &["-p", "do three steps"],
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr_text(&out).contains("must be passed back"),
        "{}",
        stderr_text(&out)
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    assert!(!requests[1].raw_body.contains("reasoning_content"));
    assert!(!dirs.home().join("cache/reasoning_echo.json").exists());
}

#[test]
fn a_provider_refusing_the_field_gets_it_dropped_once_and_remembered() {
    let server = MockServer::start(three_calls_then_answer());
    server.respond_with(|req| {
        req.raw_body.contains("reasoning_content").then(|| {
            json_reply(json!({"error": {"message":
                "Additional properties are not allowed ('reasoning_content' was unexpected) - 'messages.2'",
                "type": "invalid_request_error"}}))
            .status(400)
        })
    });
    let dirs = Dirs::new();
    let out = run_p(
        &server,
        &dirs,
        "deepseek-reasoner",
        &["-p", "do three steps"],
    );
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 5);
    assert!(requests[1].raw_body.contains("reasoning_content"));
    for later in &requests[2..] {
        assert!(!later.raw_body.contains("reasoning_content"));
    }
    let memory = std::fs::read_to_string(dirs.home().join("cache/reasoning_echo.json")).unwrap();
    assert!(memory.contains("\"refused\""), "{memory}");
}

// ---------------------------------------------------------------------------------------
// OpenRouter
// ---------------------------------------------------------------------------------------

/// One streamed chunk whose delta is `delta`.
fn delta(delta: Value) -> Ev {
    chunk(
        json!({"id": "gen-1", "object": "chat.completion.chunk", "provider": "Anthropic",
        "choices": [{"index": 0, "delta": delta, "finish_reason": null}]}),
    )
}

/// The whole `reasoning_details` OpenRouter streams for step `n` once merged: a signed
/// text item and an encrypted one, each field where it first came.
fn details(n: usize) -> Value {
    json!([
        {"type": "reasoning.text", "text": format!("Thinking about step {n}."),
         "format": "anthropic-claude-v1", "index": 0, "signature": format!("RXFz/{n}+c2ln==")},
        {"type": "reasoning.encrypted", "data": format!("ZW5jcnlwdGVk-{n}"), "id": format!("rs_{n}"),
         "format": "anthropic-claude-v1", "index": 1},
    ])
}

/// Step `n` as OpenRouter streams it: `reasoning` and `reasoning_details` pieces (the
/// signature last, on a piece of its own), then a tool call.
fn openrouter_call(n: usize) -> Reply {
    let text = format!("Thinking about step {n}.");
    let (a, b) = text.split_at(9);
    let piece = |t: &str| {
        delta(
            json!({"role": "assistant", "content": "", "reasoning": t, "reasoning_details": [
            {"type": "reasoning.text", "text": t, "format": "anthropic-claude-v1", "index": 0}]}),
        )
    };
    sse(vec![
        delta(
            json!({"role": "assistant", "content": "", "reasoning": null, "reasoning_details": []}),
        ),
        piece(a),
        piece(b),
        delta(
            json!({"reasoning_details": [{"type": "reasoning.text", "signature": format!("RXFz/{n}+c2ln=="),
            "format": "anthropic-claude-v1", "index": 0}]}),
        ),
        delta(
            json!({"reasoning_details": [{"type": "reasoning.encrypted", "data": format!("ZW5jcnlwdGVk-{n}"),
            "id": format!("rs_{n}"), "format": "anthropic-claude-v1", "index": 1}]}),
        ),
        tool_call(
            0,
            &format!("toolu_{n}"),
            "bash",
            &json!({"command": format!("echo {n}")}).to_string(),
        ),
        finish("tool_calls"),
    ])
}

/// The `reasoning_details` of every assistant message of a request, as sent.
fn echoed_details(req: &RecordedRequest) -> Vec<Value> {
    req.messages()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["reasoning_details"].clone())
        .collect()
}

#[test]
fn openrouter_like_streamed_details_go_back_merged_with_signatures_verbatim() {
    let server = MockServer::start(vec![
        openrouter_call(1),
        openrouter_call(2),
        openrouter_call(3),
        answer("done thinking"),
    ]);
    let dirs = Dirs::new();
    let out = run_p(
        &server,
        &dirs,
        "anthropic/claude-sonnet-4",
        &["-p", "three steps"],
    );
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        echoed_details(&requests[3]),
        vec![details(1), details(2), details(3)]
    );
    for n in 1..=3 {
        // The items' bytes, keys in the order they came.
        let bytes = serde_json::to_string(&details(n)).unwrap();
        assert!(
            requests[3]
                .raw_body
                .contains(&format!("\"reasoning_details\":{bytes}")),
            "{}",
            requests[3].raw_body
        );
    }
    // The plain text is not sent besides the details.
    assert!(!requests[3].raw_body.contains("\"reasoning\":"));
    assert!(!requests[3].raw_body.contains("reasoning_content"));

    // Resumed, the saved session sends the same bytes back.
    server.push(answer("resumed"));
    let out = run_p(
        &server,
        &dirs,
        "anthropic/claude-sonnet-4",
        &["-c", "-p", "and now?"],
    );
    assert_exit(&out, 0);
    let resumed = server.chat_requests().pop().unwrap();
    assert_eq!(
        echoed_details(&resumed)[..3],
        [details(1), details(2), details(3)]
    );
}

#[test]
fn openrouter_like_details_in_a_json_body_go_back_byte_for_byte() {
    // Written by hand, keys in an order no serializer would choose, so the check is on
    // the bytes as the server sent them.
    let raw_details = |n: usize| {
        format!(
            r#"[{{"format":"anthropic-claude-v1","index":0,"type":"reasoning.text","text":"Why {n}?","signature":"U2ln/{n}=="}},{{"id":null,"type":"reasoning.encrypted","data":"eA=={n}","format":"unknown","index":1}}]"#
        )
    };
    let body = |n: usize| {
        format!(
            r#"{{"id":"gen-{n}","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":"","reasoning":"Why {n}?","reasoning_details":{},"tool_calls":[{{"id":"t{n}","type":"function","function":{{"name":"bash","arguments":"{{\"command\":\"echo {n}\"}}"}}}}]}}}}]}}"#,
            raw_details(n)
        )
    };
    let replies: Vec<Reply> = (1..=3)
        .map(|n| Reply::raw(200, "application/json", body(n)))
        .chain([json_text("json done")])
        .collect();
    let server = MockServer::start(replies);
    let dirs = Dirs::with_config("stream = false\n");
    let out = run_p(
        &server,
        &dirs,
        "google/gemini-2.5-pro",
        &["-p", "three steps"],
    );
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    for n in 1..=3 {
        let expected = format!("\"reasoning_details\":{}", raw_details(n));
        assert!(
            requests[3].raw_body.contains(&expected),
            "{expected}\n{}",
            requests[3].raw_body
        );
    }
}

// ---------------------------------------------------------------------------------------
// Compaction
// ---------------------------------------------------------------------------------------

/// Compaction replaces the older turns, their reasoning with them, by the summary; the
/// current turn is kept as it is, so its tool-call message still carries its reasoning
/// when the refused request is sent again.
#[tokio::test]
async fn compaction_keeps_the_current_tool_turns_reasoning_and_drops_the_older_ones() {
    let dir = tempfile::tempdir().unwrap();
    let refusal = http_error(400).body(
        r#"{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
    );
    let server = MockServer::start(vec![
        sse(vec![
            reasoning("an old thought"),
            text(&"one ".repeat(1000)),
            finish("stop"),
        ]),
        sse(vec![
            reasoning("the current thought"),
            tool_call(0, "c1", "read_file", r#"{"path":"a.txt"}"#),
            finish("tool_calls"),
        ]),
        refusal,
        answer("the summary"),
        answer("two"),
    ]);
    std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
    let mut s = SessionBuilder::new(&server, dir.path())
        .config_toml("max_retries = 0\nidle_timeout_secs = 10\nsend_reasoning = true\n")
        .start();
    s.turn("first").await;
    let (outcome, answer) = s.turn("second").await;
    assert_eq!(
        (outcome, answer.as_str()),
        (harness9::protocol::TurnOutcome::Completed, "two")
    );
    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 5);
    // Before: both thoughts went back.
    assert!(reqs[2].raw_body.contains("an old thought"));
    assert_eq!(
        echoed_contents(&reqs[2]),
        vec![
            Some("an old thought".into()),
            Some("the current thought".into())
        ]
    );
    // After the summary (and the assistant's acknowledgement of it, which has none):
    // the current tool turn's thought only.
    assert_eq!(
        echoed_contents(&reqs[4]),
        vec![None, Some("the current thought".into())]
    );
    assert!(!reqs[4].raw_body.contains("an old thought"));
}

// ---------------------------------------------------------------------------------------
// Shown in -p and the REPL only when asked for
// ---------------------------------------------------------------------------------------

fn thinking_answer() -> Reply {
    sse(vec![
        reasoning("pondering \u{1b}[31mred"),
        reasoning(" the question"),
        text("The answer."),
        finish("stop"),
    ])
}

#[test]
fn print_mode_shows_reasoning_on_stderr_only_when_asked() {
    let server = MockServer::start(vec![
        thinking_answer(),
        thinking_answer(),
        thinking_answer(),
    ]);
    let dirs = Dirs::new();
    let out = server.run(&dirs, &["-p", "q"]);
    assert_exit(&out, 0);
    assert_eq!(stdout_text(&out), "The answer.\n");
    assert!(
        !stderr_text(&out).contains("pondering"),
        "{}",
        stderr_text(&out)
    );

    let out = server.run(&dirs, &["--show-reasoning", "-p", "q"]);
    assert_exit(&out, 0);
    assert_eq!(stdout_text(&out), "The answer.\n");
    // Not a terminal: plain, its escape made visible, the line closed.
    assert!(
        stderr_text(&out).contains("pondering ^[[31mred the question\n"),
        "{}",
        stderr_text(&out)
    );
    assert!(!out.stderr.contains(&0x1b));

    // stream-json carries it as reasoning_delta events whatever the setting.
    let out = server.run(&dirs, &["--output-format", "stream-json", "-p", "q"]);
    assert_exit(&out, 0);
    let deltas: String = json_lines(&out.stdout)
        .iter()
        .filter(|e| e["type"] == "reasoning_delta")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(deltas, "pondering \u{1b}[31mred the question");
}

#[test]
fn the_piped_repl_shows_reasoning_with_the_setting() {
    let server = MockServer::start(vec![thinking_answer()]);
    let dirs = Dirs::with_config("show_reasoning = true\n");
    let mut cmd = server.binary(&dirs);
    let out = run_fed(&mut cmd, b"first question\n");
    assert_exit(&out, 0);
    assert!(stdout_text(&out).contains("The answer."));
    assert!(!stdout_text(&out).contains("pondering"));
    assert!(
        stderr_text(&out).contains("pondering ^[[31mred the question\n"),
        "{}",
        stderr_text(&out)
    );
}

/// An interrupted answer keeps its reasoning in the field it came in.
#[tokio::test]
async fn an_interrupted_answer_keeps_its_reasoning_and_its_field() {
    use harness9::protocol::{Event, Op};
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        sse(vec![
            reasoning_field("why not"),
            text("I was say"),
            text("ing"),
            finish("stop"),
        ])
        .stall_after(2),
        answer("ok"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path())
        .config_toml("send_reasoning = true\n")
        .approver(harness9::agent::Approver::Frontend)
        .start();
    s.send("talk");
    s.until(|e| matches!(e, Event::TextDelta { .. })).await;
    s.op(Op::Interrupt);
    s.until(|e| matches!(e, Event::TurnComplete { .. })).await;
    s.turn("go on").await;
    let msgs = server.chat_requests()[1].messages();
    let assistant = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(assistant["reasoning"], "why not", "{assistant}");
    assert!(assistant.get("reasoning_content").is_none(), "{assistant}");
}
