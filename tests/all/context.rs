//! The context rules end to end through the library against the scripted server:
//! compaction before the window fills and after a context-length refusal, a failed turn
//! left out of what is sent next, and answers cut off by the provider.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::*;
use harness9::protocol::{
    CompactionTrigger, ErrorKind, Event, Op, TruncationReason, TurnOutcome, WindowSource,
};
use serde_json::Value;

const WINDOW_1000: &str = "max_retries = 0\nidle_timeout_secs = 10\ncontext_window = 1000\n";

fn system_of(request: &RecordedRequest) -> Value {
    request.messages()[0].clone()
}

fn compacted(events: &[Event]) -> Vec<(CompactionTrigger, u64, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Compacted {
                trigger,
                tokens_before,
                tokens_after,
                ..
            } => Some((*trigger, *tokens_before, *tokens_after)),
            _ => None,
        })
        .collect()
}

/// A session in `dir` that does not retry a failed request.
fn without_retries(server: &MockServer, dir: &std::path::Path) -> Session {
    SessionBuilder::new(server, dir)
        .config_toml("max_retries = 0\nidle_timeout_secs = 10\n")
        .start()
}

#[tokio::test]
async fn the_conversation_is_compacted_before_it_passes_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        answer(&format!("first answer {}", "a".repeat(3600))),
        // The summary request.
        answer("## Goal\nkeep going\n## Constraints\nnever use tabs"),
        answer("second answer"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path())
        .config_toml(WINDOW_1000)
        .start();
    let first = "never use tabs";
    s.turn(first).await;
    let (outcome, answer) = s.turn("now this").await;
    assert_eq!(
        (outcome, answer.as_str()),
        (TurnOutcome::Completed, "second answer")
    );

    let done = compacted(&s.events);
    assert_eq!(done.len(), 1, "{:#?}", s.events);
    let (trigger, before, after) = done[0];
    assert_eq!(trigger, CompactionTrigger::Threshold);
    assert!(after < before, "{before} → {after}");

    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 3);
    // The summary request: its own instructions, the old conversation, no tools.
    let summarizer = reqs[1].messages();
    assert!(
        summarizer[0]["content"]
            .as_str()
            .unwrap()
            .contains("## Constraints")
    );
    assert!(
        summarizer[1]["content"]
            .as_str()
            .unwrap()
            .contains("first answer")
    );
    assert!(reqs[1].body.get("tools").is_none() || reqs[1].body["tools"] == Value::Null);
    // The next request: the same system prompt, the summary with the user's message word
    // for word, then the current turn.
    assert_eq!(system_of(&reqs[2]), system_of(&reqs[0]));
    let sent = reqs[2].messages();
    let summary = sent[1]["content"].as_str().unwrap();
    assert!(summary.contains("never use tabs"), "{summary}");
    assert!(
        summary.contains("<user_message>\nnever use tabs\n</user_message>"),
        "the user's message is kept word for word: {summary}"
    );
    assert_eq!(sent[2]["role"], "assistant");
    assert!(
        sent.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .starts_with("now this")
    );
    assert!(!sent.iter().any(|m| {
        m["content"]
            .as_str()
            .unwrap_or("")
            .starts_with("first answer")
    }));
}

#[tokio::test]
async fn a_context_length_refusal_compacts_once_and_retries_the_same_request() {
    let dir = tempfile::tempdir().unwrap();
    let refusal = http_error(400).body(
        r#"{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
    );
    let server = MockServer::start(vec![
        answer(&"one ".repeat(1000)),
        refusal,
        answer("the summary"),
        answer("two"),
    ]);
    let mut s = without_retries(&server, dir.path());
    s.turn("first").await;
    let (outcome, answer) = s.turn("second").await;
    assert_eq!((outcome, answer.as_str()), (TurnOutcome::Completed, "two"));
    let done = compacted(&s.events);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].0, CompactionTrigger::Rejection);
    // The refusal named the window: it is known from now on.
    assert!(s.events.iter().any(|e| matches!(
        e,
        Event::ContextWindow {
            tokens: 8192,
            source: WindowSource::Rejection
        }
    )));
    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 4);
    // The retry carries the same new message after the summary.
    assert_eq!(reqs[3].last_user_text(), "second");
    assert_eq!(system_of(&reqs[3]), system_of(&reqs[0]));
    let turn_requests = s
        .events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::TurnComplete { requests, .. } => Some(*requests),
            _ => None,
        })
        .unwrap();
    assert_eq!(turn_requests, 1, "the retry is the same request");
}

#[tokio::test]
async fn a_refusal_compaction_cannot_fix_fails_the_turn_and_the_next_one_works() {
    let dir = tempfile::tempdir().unwrap();
    let refusal = || {
        http_error(400).body(
            r#"{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (2048 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":2048}}"#,
        )
    };
    let server = MockServer::start(vec![refusal(), answer("fits now")]);
    let mut s = without_retries(&server, dir.path());
    // Nothing before the first message: compaction cannot help.
    let (outcome, _) = s.turn(&"x".repeat(5000)).await;
    let TurnOutcome::Failed { kind, message } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(kind, ErrorKind::ContextTooLong);
    assert!(message.contains("compacting did not help"), "{message}");
    // Sent just before the turn's end, whose error it explains.
    assert!(
        s.events
            .iter()
            .any(|e| matches!(e, Event::TurnLeftOut { messages: 1, .. }))
    );
    let (outcome, answer) = s.turn("short").await;
    assert_eq!(
        (outcome, answer.as_str()),
        (TurnOutcome::Completed, "fits now")
    );
    let last = server.chat_requests().pop().unwrap();
    let sent = last.messages();
    assert_eq!(sent.len(), 2, "system + the new prompt only: {sent:?}");
}

#[tokio::test]
async fn a_failed_turn_is_not_sent_again() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        answer("ok"),
        http_error(400).body(r#"{"error":{"message":"bad request"}}"#),
        answer("ok again"),
    ]);
    let mut s = without_retries(&server, dir.path());
    s.turn("one").await;
    let (outcome, _) = s.turn("poison").await;
    assert!(matches!(outcome, TurnOutcome::Failed { .. }));
    s.turn("three").await;
    let reqs = server.chat_requests();
    let texts: Vec<String> = reqs[2]
        .messages()
        .iter()
        .filter_map(|m| m["content"].as_str().map(String::from))
        .collect();
    assert!(!texts.iter().any(|t| t == "poison"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "one"));
}

#[tokio::test]
async fn answers_cut_by_the_provider_are_their_own_outcome_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        sse(vec![text("half an ans"), finish("length")]),
        sse(vec![text("filtered"), finish("content_filter")]),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    let (outcome, text) = s.turn("long answer please").await;
    assert_eq!(
        outcome,
        TurnOutcome::Truncated {
            reason: TruncationReason::Length
        }
    );
    assert_eq!(text, "half an ans");
    assert!(s.events.iter().any(|e| matches!(e,
        Event::Warning { message } if message.contains("finish_reason: length"))));
    let (outcome, _) = s.turn("again").await;
    assert_eq!(
        outcome,
        TurnOutcome::Truncated {
            reason: TruncationReason::ContentFilter
        }
    );
}

#[tokio::test]
async fn compact_by_hand_keeps_the_focus_and_says_when_there_is_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        answer(&"a long answer ".repeat(300)),
        answer("the summary"),
        answer("short"),
        answer("the summary again"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    s.op(Op::Compact { focus: None });
    let warning = s.until(|e| matches!(e, Event::Warning { .. })).await;
    assert!(
        matches!(&warning, Event::Warning { message } if message.contains("nothing to compact")),
        "{warning:?}"
    );
    s.turn("hello").await;
    s.op(Op::Compact {
        focus: Some("the parser".into()),
    });
    s.until(|e| {
        matches!(
            e,
            Event::Compacted {
                trigger: CompactionTrigger::Manual,
                ..
            }
        )
    })
    .await;
    let reqs = server.chat_requests();
    assert!(
        reqs[1]
            .last_user_text()
            .contains("keep this in view: the parser")
    );
}

#[tokio::test]
async fn the_window_is_learnt_from_the_endpoint_without_delaying_the_first_request() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![]);
    server.route(
        "/v1/models",
        serde_json::json!({"object": "list", "data": [{"id": "mock-model", "max_model_len": 4096}]}),
    );
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    let configured = s
        .until(|e| matches!(e, Event::SessionConfigured { .. }))
        .await;
    assert!(
        matches!(
            configured,
            Event::SessionConfigured {
                context_window: None,
                ..
            }
        ),
        "{configured:?}"
    );
    s.turn("hi").await;
    let learnt = |e: &Event| {
        matches!(
            e,
            Event::ContextWindow {
                tokens: 4096,
                source: WindowSource::Models
            }
        )
    };
    if !s.events.iter().any(learnt) {
        s.until(learnt).await;
    }
    // The endpoint is asked only after the first answer came back.
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths[0], "/v1/chat/completions", "{paths:?}");
    // A configured window is never asked for.
    let server = MockServer::start(vec![]);
    let mut s = SessionBuilder::new(&server, dir.path())
        .config_toml("context_window = 1000\n")
        .start();
    s.turn("hi").await;
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.path.ends_with("/chat/completions"))
    );
}
